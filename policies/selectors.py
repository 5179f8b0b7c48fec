from django.db.models import QuerySet

from policies.models import PolicyEntry, ReturnPolicy


def return_policy_get() -> ReturnPolicy:
    """The single return-policy row (created by migration, so it always exists)."""
    return ReturnPolicy.objects.get(pk=ReturnPolicy.SINGLETON_ID)


def policy_entry_list_published() -> QuerySet[PolicyEntry]:
    return PolicyEntry.objects.filter(is_published=True).order_by("topic")


def policy_entry_get_published(*, topic: str) -> PolicyEntry | None:
    return policy_entry_list_published().filter(topic=topic).first()
