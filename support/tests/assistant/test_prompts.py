"""The system prompt's FAQ topics: what staff wrote, as the model reads it, at once after a change."""

import pytest
from django.core.cache import cache

from policies.tests.factories import PolicyEntryFactory
from support.assistant import prompts
from support.assistant.capabilities.registry import TOOLS
from support.assistant.prompts import PROMPT_QUESTIONS, return_policy_terms, system_prompt
from support.llm.protocol import FaqTopic, faq_topics_in

pytestmark = pytest.mark.usefixtures("demo_data")

QUESTIONS = [f"Do you offer gift wrapping, option {n}?" for n in range(5)]


def test_each_published_topic_is_listed_with_its_first_questions():
    PolicyEntryFactory(topic="gift_wrapping", title="Gift wrapping", example_questions="\n".join(QUESTIONS))
    PolicyEntryFactory(topic="secret_sale", is_published=False)

    topics = {topic.key: topic for topic in faq_topics_in(system_prompt())}
    assert topics["gift_wrapping"] == FaqTopic(
        "gift_wrapping", "Gift wrapping", tuple(QUESTIONS[:PROMPT_QUESTIONS])
    )
    assert {"shipping", "returns_overview", "password_reset"} <= set(topics)
    assert "secret_sale" not in topics


def test_the_built_in_model_reads_the_topics_as_written_with_the_prompt_and_no_query_of_its_own(
    django_assert_num_queries,
):
    PolicyEntryFactory(topic="gift_wrapping", title="Gift wrapping", example_questions="\n".join(QUESTIONS))
    PolicyEntryFactory(topic="secret_sale", is_published=False)
    prompts.system_prompt_forget()
    system_prompt()

    with django_assert_num_queries(0):
        topics = {topic.key: topic for topic in prompts.faq_topics_published()}
    assert topics["gift_wrapping"].questions == tuple(QUESTIONS)  # every question, not the prompt's three
    assert topics["gift_wrapping"].answer
    assert set(topics) == {topic.key for topic in faq_topics_in(system_prompt())}


def test_a_topic_staff_save_is_in_the_very_next_prompt(django_capture_on_commit_callbacks):
    assert "gift_wrapping" not in system_prompt()  # rendered, and kept for a while
    with django_capture_on_commit_callbacks(execute=True):
        PolicyEntryFactory(topic="gift_wrapping", title="Gift wrapping")
        assert "gift_wrapping" not in system_prompt()  # not before the save commits
    assert "gift_wrapping" in system_prompt()


def test_a_topic_another_process_saved_is_in_this_process_next_prompt():
    """Each process keeps its prompt a while; a save anywhere counts up the version in the shared cache,
    which every process reads on each turn."""
    assert "Gift wrapping" not in system_prompt()
    # Another process saves: the row (its commit is not heard here), then its count in the cache.
    PolicyEntryFactory(topic="gift_wrapping", title="Gift wrapping")
    assert "Gift wrapping" not in system_prompt()
    cache.add(prompts.PROMPT_VERSION_KEY, 0, timeout=None)
    cache.incr(prompts.PROMPT_VERSION_KEY)

    assert "Gift wrapping" in system_prompt()


def test_a_save_counts_up_the_version_every_process_reads(django_capture_on_commit_callbacks):
    before = cache.get(prompts.PROMPT_VERSION_KEY)
    with django_capture_on_commit_callbacks(execute=True):
        PolicyEntryFactory(topic="gift_wrapping", title="Gift wrapping")
    assert cache.get(prompts.PROMPT_VERSION_KEY) == (before or 0) + 1


def test_a_failing_cache_keeps_the_prompt_its_time(monkeypatch):
    rendered = system_prompt()

    def down(*args, **kwargs):
        raise ConnectionError("the cache is down")

    monkeypatch.setattr(cache, "get", down)
    monkeypatch.setattr(cache, "incr", down)
    PolicyEntryFactory(topic="gift_wrapping", title="Gift wrapping")
    assert system_prompt() == rendered  # kept, as before there was a version
    prompts._version_next()  # a save's count fails: this process still renders afresh
    assert "Gift wrapping" in system_prompt()


def test_the_validator_takes_the_return_policy_from_the_prompt_never_the_faq_questions():
    PolicyEntryFactory(topic="store_credit", example_questions="Can I get store credit after 60 days?")
    terms = return_policy_terms()
    assert "30" in terms and "store credit" not in terms and "60 days" not in terms


@pytest.mark.django_db
def test_the_system_prompt_names_every_tool_the_model_is_given():
    """A capability the prompt never names is one the model is told nothing of (rule 5 once sent
    invoices to a person while email_receipt was there)."""
    prompt = system_prompt()
    assert [tool["name"] for tool in TOOLS if tool["name"] not in prompt] == []
