"""run_evals --faq: what customers asking about the store's own FAQ topics get (issue 37's measurement)."""

import re
from io import StringIO

import pytest
from django.core.management import call_command

from policies.models import PolicyEntry
from policies.tests.factories import PolicyEntryFactory
from support.assistant.builtin.model import OfflineModel
from support.assistant.configured import configured_model
from support.assistant.prompts import system_prompt, system_prompt_forget
from support.assistant.understanding.wording import ASK_WHICH_POLICY, NO_POLICY_REPLY
from support.evals.faq import (
    DEMO_TOPICS,
    ISSUE_TOPICS,
    faq_evaluate,
    faq_heldout,
    faq_topics,
    faq_topics_install,
)
from support.llm.protocol import HANDOFF_TOOL, OFFER_PERSON, REFUSAL_TEMPLATE
from support.testing.messages_stub import message, text, tool_use

pytestmark = pytest.mark.usefixtures("demo_data")

# Measured with the FAQ reader of issue 37 (support/assistant/builtin/faq.py, reading meaning with the
# sentence model), less two points: a change that serves fewer of the held-out messages fails here.
FLOORS = {
    "issue's seven topics, served": 0.842,
    "all new topics, served": 0.837,
    "demo topics, served": 0.963,
    "not for the FAQ, routed right": 0.913,
}
# The seven topics' figure in each held-out set, so that a drop in one cannot hide behind the other.
SET_FLOORS = {"heldout.json": 0.856, "heldout_second.json": 0.830, "heldout_third.json": 0.838}


def _figure(line: str) -> tuple[str, str]:
    """A figure of run_evals --faq and its share, in percent, from its line ("<figure>: <share>%")."""
    found = re.fullmatch(r"(.+): ([\d.]+)%", line)
    assert found, line
    return found[1], found[2]


def _system() -> list[dict]:
    system_prompt_forget()
    return [{"type": "text", "text": system_prompt()}]


def test_each_first_answer_is_read_as_what_the_customer_got(claude):
    """One scripted reply for each outcome, through the real SDK: the eval tells them apart."""
    faq_topics_install(topics=faq_topics())
    claude.reset(
        message(tool_use("lookup_policy", {"topic": "gift_cards"})),
        message(tool_use("lookup_policy", {"topic": "payment_methods"})),
        message(tool_use("lookup_policy", {"topic": "shipping"})),
        message(text(REFUSAL_TEMPLATE.format(topic="payments"))),
        message(text(f"{REFUSAL_TEMPLATE.format(topic='payments')} {OFFER_PERSON}")),
        message(text(NO_POLICY_REPLY)),
        message(text(ASK_WHICH_POLICY)),
        message(tool_use(HANDOFF_TOOL, {"reason": "customer_asked"})),
        message(
            tool_use("lookup_order", {"order_id": "BK-10042", "customer_email": "sarah.chen@example.com"})
        ),
        message(text("Sure, the capital of France is Paris.")),
    )
    cases = [{"text": f"question {number}", "topic": "gift_cards"} for number in range(9)]
    cases[2]["topic"] = "shipping"  # a demo topic's route is read back to its topic
    cases.append({"text": "question 9", "topic": "newsletter"})

    report = faq_evaluate(model=configured_model(), system=_system(), cases=cases)

    assert report.outcomes["gift_cards"] == {
        "served": 1,
        "wrong_topic": 1,
        "refused": 1,
        "offered_person": 2,
        "asked_which": 1,
        "handover": 1,
        "other_route": 1,
    }
    assert report.outcomes["shipping"] == {"served": 1}
    assert report.outcomes["newsletter"] == {"other": 1}
    assert report.negatives is None
    assert len(report.misses) == 8  # every case but the two served


def test_the_built_in_model_served_from_an_installed_topic_and_an_order_request_is_another_route():
    cases = [
        {"text": faq_topics()[0]["example_questions"].splitlines()[0], "topic": "payment_methods"},
        {"text": "where is my order BK-10042", "topic": "payment_methods"},
        {"text": "where is my order BK-10042", "route": "order_status"},
        {"text": "what's the weather like in Chicago tomorrow", "route": "out_of_scope"},
    ]
    before = faq_evaluate(model=OfflineModel(), system=_system(), cases=cases[:1])
    faq_topics_install(topics=faq_topics())

    report = faq_evaluate(model=OfflineModel(), system=_system(), cases=cases)

    assert before.outcomes["payment_methods"]["served"] == 0  # no topic, no answer: the eval can fail
    assert report.outcomes["payment_methods"] == {"served": 1, "other_route": 1}
    assert report.negatives is not None
    assert report.negatives.total == {"order_status": 1, "out_of_scope": 1}
    assert report.negatives_right() == 1.0


def test_the_set_is_ten_topics_staff_could_save_and_30_messages_each_none_an_example_question():
    topics = faq_topics()
    faq_topics_install(topics=topics)  # each checked as admin checks it
    assert PolicyEntry.objects.filter(is_published=True).count() == len(topics) + len(DEMO_TOPICS)
    keys = [topic["topic"] for topic in topics]
    assert len(keys) >= 10 and set(ISSUE_TOPICS) <= set(keys)
    cases = faq_heldout()
    for key in keys:
        assert sum(case.get("topic") == key for case in cases) >= 30, key
    assert sum(case.get("topic") in DEMO_TOPICS for case in cases) >= 60
    assert sum("route" in case for case in cases) >= 60
    examples = {question.casefold() for entry in PolicyEntry.objects.all() for question in entry.questions}
    assert not [case["text"] for case in cases if case["text"].casefold() in examples]


def test_run_evals_faq_prints_each_topic_and_holds_the_figures_at_their_floor():
    published = list(PolicyEntry.objects.values_list("topic", flat=True))
    out = StringIO()

    call_command("run_evals", faq=True, stdout=out)

    lines = out.getvalue().splitlines()
    rows = {line.split()[0]: line.split()[1:] for line in lines[2:] if re.match(r"[a-z_]+ +\d+ ", line)}
    assert set(rows) == {topic["topic"] for topic in faq_topics()} | set(DEMO_TOPICS)
    figures = dict(_figure(line) for line in lines if line.endswith("%"))
    assert set(figures) == set(FLOORS), lines
    for figure, floor in FLOORS.items():
        assert float(figures[figure]) / 100 >= floor, f"{figure}: {figures[figure]}% < {floor:.1%}"
    by_set = {
        found[1]: int(found[2]) / int(found[3])
        for line in lines
        if (found := re.fullmatch(r"issue's seven topics in (.+): (\d+) of (\d+) served \(.+\)", line))
    }
    assert set(by_set) == set(SET_FLOORS), lines
    for name, floor in SET_FLOORS.items():
        assert by_set[name] >= floor, f"{name}: {by_set[name]:.1%} < {floor:.1%}"
    assert list(PolicyEntry.objects.values_list("topic", flat=True)) == published  # rolled back


def test_a_topic_looked_up_whose_answer_the_validator_replaces_is_not_served():
    """The route alone would count it: the customer read the fallback."""
    PolicyEntryFactory(topic="gift_cards", title="Gift cards", text="Gift cards **never** expire.")
    cases = [{"text": "Do gift cards expire?", "topic": "gift_cards"}]

    report = faq_evaluate(model=OfflineModel(), system=_system(), cases=cases)

    assert report.outcomes["gift_cards"] == {"replaced": 1}


def test_another_topic_is_served_only_where_the_case_names_it_as_answering_too(claude):
    """ "Can I pay with my gift card?": the payment methods answer answers it, where a judge said so."""
    faq_topics_install(topics=faq_topics())
    claude.reset(*[message(tool_use("lookup_policy", {"topic": "payment_methods"}))] * 2)
    cases = [
        {"text": "can I pay with my gift card", "topic": "gift_cards", "also": ["payment_methods"]},
        {"text": "can I pay with my gift card?", "topic": "gift_cards", "also": ["preorders"]},
    ]

    report = faq_evaluate(model=configured_model(), system=_system(), cases=cases)

    assert report.outcomes["gift_cards"] == {"served_also": 1, "wrong_topic": 1}
    assert report.served(["gift_cards"]) == 0.5
