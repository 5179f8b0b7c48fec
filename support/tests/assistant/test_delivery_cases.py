"""Problems with a delivery become cases for staff: the tool checks the order and the books in code, opens
(or finds) the case with the conversation linked, and hands the chat over with a line for staff. A scripted
model calls it through the real SDK; the built-in model is driven as a customer would."""

import json

import pytest

from orders.models import CaseStatus, DeliveryCase, DeliveryProblem
from support.models import Conversation, ConversationDeliveryCase, ConversationStatus, TurnTrace
from support.testing.chat_client import ChatClient
from support.testing.messages_stub import message, text, tool_use

SARAH = {"order_id": "BK-10042", "customer_email": "sarah.chen@example.com"}  # delivered, two books

pytestmark = pytest.mark.usefixtures("demo_data")


def tool_results(request: dict) -> list[dict]:
    blocks = request["messages"][-1]["content"]
    return [json.loads(block["content"]) for block in blocks if block["type"] == "tool_result"]


def report(claude, customer, arguments: dict, words: str = "my parcel never came"):
    claude.reset(
        message(tool_use("report_delivery_problem", arguments)),
        message(text("Our team will sort it out and refund you today.")),  # never shown: see below
    )
    return customer.send(words)


def test_a_report_opens_a_case_linked_to_the_conversation_and_hands_over_with_a_line_for_staff(
    claude, customer
):
    response = report(
        claude,
        customer,
        {**SARAH, "problem": "damaged", "item_titles": ["sapiens"], "details": "cover torn"},
        words="Sapiens came with a torn cover",
    )

    case = DeliveryCase.objects.get()
    assert (case.problem, case.status, case.details) == (
        DeliveryProblem.DAMAGED,
        CaseStatus.OPEN,
        "cover torn",
    )
    assert [item.title for item in case.items.all()] == ["Sapiens"]
    conversation = Conversation.objects.get()
    assert ConversationDeliveryCase.objects.get().conversation == conversation
    assert conversation.status == ConversationStatus.WAITING
    assert conversation.handoff_note.startswith(f"Case {case.pk}, order BK-10042: arrived damaged (Sapiens).")
    assert "cover torn" in conversation.handoff_note
    # The customer reads our fixed words about what happens next, not the model's promise.
    reply = response.json()["reply"]
    assert reply.startswith(f"I've reported this as case {case.pk} for order BK-10042: arrived damaged")
    assert "refund you today" not in reply
    assert TurnTrace.objects.get().tool_calls[0]["tool"] == "report_delivery_problem"


def test_the_wrong_email_opens_no_case_and_says_nothing_of_the_order(claude, customer):
    report(
        claude,
        customer,
        {**SARAH, "customer_email": "someone@example.com", "problem": "late", "details": "x"},
    )

    assert tool_results(claude.requests[1])[0]["error"] == "order_not_found"
    assert not DeliveryCase.objects.exists()
    assert Conversation.objects.get().status == ConversationStatus.ASSISTANT


def test_a_damaged_book_of_several_unnamed_is_asked_for_with_the_orders_titles(claude, customer):
    report(claude, customer, {**SARAH, "problem": "damaged", "details": "torn"})

    result = tool_results(claude.requests[1])[0]
    assert result["error"] == "items_needed"
    assert result["order_titles"] == ["The Goldfinch", "Sapiens"]
    assert not DeliveryCase.objects.exists()


def test_a_title_not_in_the_order_is_refused_with_the_orders_titles(claude, customer):
    report(claude, customer, {**SARAH, "problem": "wrong_item", "item_titles": ["Dune"], "details": "x"})

    result = tool_results(claude.requests[1])[0]
    assert result["error"] == "item_not_in_order"
    assert "Dune" not in json.dumps(result)
    assert not DeliveryCase.objects.exists()


def test_an_unknown_problem_is_named_by_field_without_echo(claude, customer):
    report(claude, customer, {**SARAH, "problem": "<script>stolen by aliens", "details": "x"})

    result = tool_results(claude.requests[1])[0]
    assert result["error"] == "invalid_arguments"
    assert [problem["field"] for problem in result["problems"]] == ["problem"]
    assert "aliens" not in json.dumps(result)


def test_an_order_not_yet_shipped_gets_the_stores_reason_and_no_case(claude, customer):
    report(
        claude,
        customer,
        {
            "order_id": "BK-10103",
            "customer_email": "sarah.chen@example.com",
            "problem": "not_arrived",
            "details": "x",
        },
    )

    result = tool_results(claude.requests[1])[0]
    assert result["error"] == "not_shipped"
    assert not DeliveryCase.objects.exists()


def test_reported_in_two_conversations_is_one_case_linked_to_both(claude, customer):

    arguments = {**SARAH, "problem": "not_arrived", "details": "not here"}
    report(claude, customer, arguments)
    report(claude, ChatClient(), arguments)

    case = DeliveryCase.objects.get()
    assert case.conversations.count() == 2
    assert tool_results(claude.requests[1])[0]["already_reported"] is True


class TestBuiltInModel:
    pytestmark = pytest.mark.usefixtures("offline")

    def test_delivered_but_not_here_is_reported_in_one_message(self, customer):
        response = customer.send(
            "my package says delivered but i never got it. BK-10042 sarah.chen@example.com"
        )

        case = DeliveryCase.objects.get()
        assert case.problem == DeliveryProblem.NOT_ARRIVED
        assert response.json()["reply"].startswith(f"I've reported this as case {case.pk} for order BK-10042")
        assert response.json()["status"] == ConversationStatus.WAITING

    def test_not_here_after_a_lookup_said_delivered_reports_that_order(self, customer):
        customer.send("where is BK-10042? sarah.chen@example.com")
        customer.send("so what do i do now? it's not here")

        assert DeliveryCase.objects.get().problem == DeliveryProblem.NOT_ARRIVED

    def test_a_damaged_book_is_asked_for_by_title_then_reported(self, customer):
        customer.send("the book arrived damaged")
        customer.send("BK-10042")
        asked = customer.send("sarah.chen@example.com").json()["reply"]
        assert asked == "Which of the books does this concern? The order has The Goldfinch and Sapiens."
        customer.send("the goldfinch")

        case = DeliveryCase.objects.get()
        assert [item.title for item in case.items.all()] == ["The Goldfinch"]
        assert case.details == "the book arrived damaged"

    def test_a_damaged_book_with_a_refund_asked_for_is_a_return_not_a_case(self, customer):
        reply = customer.send("the book i got is damaged, i want a refund BK-10042 sarah.chen@example.com")

        assert "can be returned" in reply.json()["reply"]
        assert not DeliveryCase.objects.exists()

    def test_an_order_not_yet_shipped_offers_a_person_instead(self, customer):
        reply = customer.send("my book came damaged BK-10103 sarah.chen@example.com").json()["reply"]

        assert reply.startswith("This order has not shipped yet")
        assert reply.endswith("Would you like me to pass this to a member of our support team?")
        assert not DeliveryCase.objects.exists()


@pytest.mark.usefixtures("offline")
def test_staff_see_the_case_in_the_inbox_and_on_the_conversation(customer, staff_client):
    customer.send("wrong book in my box BK-9871 maria.gonzalez@example.com")
    case, conversation = DeliveryCase.objects.get(), Conversation.objects.get()

    inbox = staff_client.get("/admin/support/conversation/").content.decode()
    page = staff_client.get(f"/admin/support/conversation/{conversation.pk}/change/").content.decode()
    case_page = staff_client.get(f"/admin/orders/deliverycase/{case.pk}/change/").content.decode()

    assert f"Case {case.pk} (open)" in inbox
    assert f"/admin/orders/deliverycase/{case.pk}/change/" in page
    assert "wrong item sent (The Midnight Library)" in page  # the line for staff, and the case itself
    assert f"/admin/support/conversation/{conversation.pk}/change/" in case_page  # reported in
