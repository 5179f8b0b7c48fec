import factory
from factory.django import DjangoModelFactory

from policies.models import PolicyEntry


class PolicyEntryFactory(DjangoModelFactory[PolicyEntry]):
    class Meta:
        model = PolicyEntry

    topic = factory.Sequence(lambda n: f"topic_{'abcdefghij'[n % 10]}{'abcdefghij'[n // 10 % 10]}")
    title = factory.Sequence(lambda n: f"Policy {n}")
    text = "Plain words customers can rely on."
    example_questions = factory.LazyAttribute(lambda entry: f"What is your {entry.title.lower()}?")
    is_published = True
