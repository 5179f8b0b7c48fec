"""News of a delivery problem already reported: the order's cases told as they stand (open, or resolved in
staff's own words), after the email check; asking is never a second report."""

import json
from datetime import UTC, datetime

import pytest
from django.utils import timezone

from orders.models import DeliveryCase, DeliveryProblem, Order
from orders.services import delivery_case_open, delivery_case_resolve
from support.conversations.models import ConversationMessage, ConversationStatus
from support.testing.messages_stub import message, text, tool_use

SARAH = "sarah.chen@example.com"
RESOLUTION = "We sent you a new copy of The Goldfinch at no charge."

pytestmark = pytest.mark.usefixtures("demo_data")


@pytest.fixture
def case() -> DeliveryCase:
    """Sarah reported The Goldfinch of BK-10042 damaged in an earlier conversation."""
    order = Order.objects.get(number="BK-10042")
    reported, _ = delivery_case_open(
        order=order,
        problem=DeliveryProblem.DAMAGED,
        items=[order.items.get(title="The Goldfinch")],
        details="The cover is torn.",
    )
    return reported


def tools_called() -> list[str]:
    blocks = [
        block for message in ConversationMessage.objects.order_by("position") for block in message.content
    ]
    return [block["name"] for block in blocks if block["type"] == "tool_use"]


def open_sentence(case: DeliveryCase) -> str:
    return (
        f"Case {case.pk} for order BK-10042 (arrived damaged: The Goldfinch), reported on "
        f"{timezone.localdate(case.created_at).isoformat()}, is open: our team is looking into it and will "
        "email you what they do about it."
    )


@pytest.mark.parametrize(
    "asked",
    [
        "Any news on case {case} for BK-10042?",
        "What happened with the problem I reported on order BK-10042?",
        "I reported a problem with BK-10042 last week, is there an update?",
        "I've already reported this, any update on BK-10042?",
        "Has my case been resolved? It's about BK-10042.",
        # A problem's words too ("damaged"): read as news of the report, before a report.
        "The damaged book I reported for BK-10042 - what now?",
    ],
)
def test_the_built_in_model_tells_an_open_case_after_the_email_check(offline, customer, case, asked):
    assert "email" in customer.send(asked.format(case=case.pk)).json()["reply"]
    reply = customer.send(SARAH).json()

    assert reply["reply"] == open_sentence(case)
    assert tools_called() == ["lookup_delivery_cases"]
    # Asking is no second report and no handover: the conversation stays with the assistant.
    assert DeliveryCase.objects.count() == 1 and reply["status"] == ConversationStatus.ASSISTANT


def resolved_sentence(case: DeliveryCase) -> str:
    resolved = delivery_case_resolve(case=case, resolution=RESOLUTION, resolved_by=None)
    assert resolved.resolved_at is not None
    return (
        f"Case {case.pk} for order BK-10042 (arrived damaged: The Goldfinch), reported on "
        f"{timezone.localdate(case.created_at).isoformat()}, was resolved on "
        f"{timezone.localdate(resolved.resolved_at).isoformat()}: our team emailed you what they did about "
        "it that day, to the email address on the order."
    )


def test_a_resolved_case_says_so_and_that_staff_s_words_were_emailed_never_repeats_them(
    offline, customer, case
):
    told = resolved_sentence(case)
    assert customer.send(f"Any news on my case for BK-10042? {SARAH}").json()["reply"] == told
    # Free text no tool checks stays in the email: the reply would be replaced for an amount in it.
    assert RESOLUTION not in json.dumps([message.content for message in ConversationMessage.objects.all()])


def test_a_case_is_told_on_the_store_s_day_not_utc_s(offline, customer, case, settings):
    settings.TIME_ZONE = "America/New_York"
    DeliveryCase.objects.filter(pk=case.pk).update(created_at=datetime(2026, 4, 11, 2, 0, tzinfo=UTC))
    reply = customer.send(f"Any news on my case for BK-10042? {SARAH}").json()["reply"]
    assert "reported on 2026-04-10," in reply  # 10 p.m. in New York


def test_an_order_without_a_report_says_so(offline, customer):
    reply = customer.send(f"What happened with the problem I reported on BK-10042? {SARAH}").json()["reply"]
    assert reply.startswith("No delivery problem has been reported for order BK-10042.")


def test_without_the_email_on_the_order_no_case_is_told(offline, customer, case):
    reply = customer.send(f"Any news on case {case.pk} for BK-10042? james.murphy@example.com").json()[
        "reply"
    ]
    assert "couldn't find an order" in reply
    assert "Goldfinch" not in reply and "case" not in reply.lower()


@pytest.mark.parametrize(
    "told",
    [
        "My copy of The Goldfinch from BK-10042 arrived damaged.",
        "The Goldfinch from BK-10042 arrived damaged, I already reported it to the courier.",
        # A case that is a box, and a report followed by a problem told now: reported, never news.
        "My copy of The Goldfinch from BK-10042 arrived damaged, the case was crushed.",
        "I reported BK-10042 as late, now it finally arrived but The Goldfinch is damaged.",
    ],
)
def test_a_problem_told_anew_is_still_reported(offline, customer, case, told):
    customer.send(f"{told} {SARAH}")
    assert tools_called() == ["report_delivery_problem"]


@pytest.mark.parametrize(
    ("words", "tool"),
    [
        ("ok in that case where is my order BK-10042", "lookup_order"),
        ("I reported the damaged book on BK-10042 and now I'd like to return it", "check_return_eligibility"),
    ],
)
def test_other_requests_beside_the_word_case_or_a_report_are_those_requests(
    offline, customer, case, words, tool
):
    customer.send(f"{words} {SARAH}")
    assert tools_called()[:1] == [tool]


def test_in_the_case_of_is_no_news_of_a_case(offline, customer):
    reply = customer.send("What happens in the case of a damaged book?").json()["reply"]
    assert "problems reported" not in reply  # the task's lead: "I can look up the problems reported …"


def test_a_provider_s_call_tells_the_case_and_the_reply_passes_the_validator(model_api, customer, case):
    # Staff's words are quoted as they wrote them; what they say of the order is no claim of the model's.
    told = resolved_sentence(case)
    model_api.reset(
        message(tool_use("lookup_delivery_cases", {"order_id": "BK-10042", "customer_email": SARAH})),
        message(text(told)),
    )
    reply = customer.send(f"any news on case {case.pk} for BK-10042? {SARAH}").json()["reply"]
    assert reply == told
    blocks = model_api.sent[1]["messages"][-1]["content"]
    [result] = [json.loads(block["content"]) for block in blocks if block["type"] == "tool_result"]
    assert [(found["case_number"], found["status"]) for found in result["cases"]] == [(case.pk, "resolved")]


def test_a_request_to_look_into_an_order_is_not_news_of_a_report(offline, customer, case):
    customer.send(f"Could you look into where my order BK-10042 is? {SARAH}")
    assert tools_called() == ["lookup_order"]
