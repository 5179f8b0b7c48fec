"""The JSON API and the conversation lifecycle: sessions, limits, leases, failures at every step."""

import contextlib
import json
import re
import time
import uuid
from datetime import datetime, timedelta
from unittest import mock

import pytest
from django.core.management import call_command
from django.http import HttpResponseBase
from django.utils import timezone

from orders.models import Order, ReturnRecord
from support.assistant.outcomes import TURN_LIMIT_REPLY
from support.models import Conversation, ConversationMessage, ModelCall
from support.testing.chat_client import ChatClient
from support.testing.messages_stub import ErrorReply, message, text, tool_use
from support.testing.protocol import messages_problems

pytestmark = pytest.mark.usefixtures("demo_data")

ASK_NUMBER = "What is the order number of your order?"


class TestMessages:
    def test_get_sets_csrf_cookie_and_returns_an_empty_transcript(self, customer, offline):
        response = customer.transcript()
        assert response.status_code == 200
        assert response.json() == {
            "messages": [],
            "conversation": None,
            "offline": True,
            "status": "assistant",
            "notice": "",
            "email_needed": False,
            "awaiting_store": False,
        }
        assert "csrftoken" in response.cookies

    def test_post_without_csrf_token_is_refused(self, claude):
        response = ChatClient().http.post(
            "/api/chat", json.dumps({"message": "hi"}), content_type="application/json"
        )
        assert response.status_code == 403
        assert not Conversation.objects.exists()

    @pytest.mark.parametrize(
        ("body", "detail"),
        [
            (json.dumps({"message": ""}), "Please type a message first."),
            (json.dumps({"message": "   \n\x00 "}), "Please type a message first."),
            (json.dumps({"message": 42}), "Please send your message as text."),
            (json.dumps({"message": ["hi"]}), "Please send your message as text."),
            (json.dumps({"text": "hi"}), "Please send your message as text."),
            (
                json.dumps({"message": "x" * 4001}),
                "Messages can be at most 4000 characters. Please shorten yours.",
            ),
            ("{not json", 'Send JSON like {"message": "Where is my order?"}.'),
            (json.dumps(["message"]), "Please send your message as text."),
        ],
    )
    def test_bad_messages_get_400_with_a_sentence_and_nothing_is_stored(self, claude, customer, body, detail):
        response = customer.send_raw(body)
        assert response.status_code == 400
        assert response.json()["detail"] == detail
        assert not ConversationMessage.objects.exists()
        assert claude.requests == []

    def test_a_message_of_exactly_the_limit_is_accepted(self, claude, customer):
        claude.reset(message(text(ASK_NUMBER)))
        assert customer.send("x" * 4000).status_code == 200

    def test_transcript_shows_customer_words_and_replies_only(self, claude, customer):
        claude.reset(message(text(ASK_NUMBER)))
        reply = customer.send("Where is my order?")
        conversation = customer.transcript().json()["conversation"]
        assert len(conversation) == 16  # a reference, not the database id
        assert reply.json() == {
            "conversation": conversation,
            "reply": ASK_NUMBER,
            "offline": False,
            "turn": 1,
            "status": "assistant",
            "votable": True,
            "awaiting_store": False,
        }
        messages = customer.transcript().json()["messages"]
        assert [{key: m[key] for key in m if key != "at"} for m in messages] == [
            {"role": "customer", "text": "Where is my order?"},
            {"role": "assistant", "text": ASK_NUMBER, "turn": 1, "helpful": None},
        ]
        assert all(datetime.fromisoformat(m["at"]) for m in messages)

    def test_reset_starts_a_new_conversation(self, claude, customer):
        claude.reset(message(text(ASK_NUMBER)))
        customer.send("Where is my order?")
        first = Conversation.objects.get()
        assert customer.reset().json()["messages"] == []
        assert customer.transcript().json()["messages"] == []
        claude.reset(message(text(ASK_NUMBER)))
        customer.send("Where is my order?")
        first.refresh_from_db()
        assert first.ended_at is not None
        assert Conversation.objects.count() == 2

    def test_customers_never_see_each_others_conversations(self, claude, customer):
        claude.reset(message(text(ASK_NUMBER)))
        customer.send("Where is my order BK-10042?")
        stranger = ChatClient()
        assert stranger.transcript().json()["messages"] == []


class TestLimits:
    def test_turn_limit_asks_for_a_new_conversation_without_calling_the_model(
        self, claude, customer, settings
    ):
        settings.BOOKLY_MAX_TURNS_PER_CONVERSATION = 2
        for _ in range(2):
            claude.reset(message(text(ASK_NUMBER)))
            customer.send("Where is my order?")
        claude.reset()
        response = customer.send("And now?")
        assert response.json()["reply"] == TURN_LIMIT_REPLY
        assert claude.requests == []

    def test_idle_conversation_ends_and_the_next_message_starts_a_new_one(self, claude, customer, settings):
        claude.reset(message(text(ASK_NUMBER)))
        customer.send("Where is my order?")
        Conversation.objects.update(last_activity_at=timezone.now() - timedelta(minutes=31))
        assert customer.transcript().json()["messages"] == []
        claude.reset(message(text(ASK_NUMBER)))
        customer.send("Hello again, where is my order?")
        assert Conversation.objects.filter(ended_at__isnull=False).count() == 1
        assert len(claude.requests[0]["messages"]) == 1

    def test_purge_deletes_old_conversations_but_keeps_their_returns(self, claude, customer):
        claude.reset(
            message(
                tool_use(
                    "check_return_eligibility",
                    {"order_id": "BK-10042", "customer_email": "sarah.chen@example.com"},
                )
            ),
            message(text("Your order can be returned.")),
        )
        customer.send("Return BK-10042, sarah.chen@example.com")
        claude.reset(
            message(
                tool_use(
                    "initiate_return",
                    {"order_id": "BK-10042", "customer_email": "sarah.chen@example.com", "reason": "Damaged"},
                )
            ),
            message(text("Your return has started.")),
        )
        customer.send("yes")
        Conversation.objects.update(last_activity_at=timezone.now() - timedelta(days=91))
        recent = Conversation.objects.create()

        call_command("purge_conversations", verbosity=0)

        assert list(Conversation.objects.all()) == [recent]
        assert not ConversationMessage.objects.exists()
        assert not ReturnRecord.objects.get().conversations.exists()


class TestOneTurnAtATime:
    # The stub answers from its own thread, which needs committed data to see.
    @pytest.mark.django_db(transaction=True, serialized_rollback=True)
    def test_second_message_while_a_turn_runs_gets_409_and_nothing_interleaves(self, claude, customer):
        answered: list[tuple[int, dict]] = []  # the second message's status and body

        def answer_while_a_second_message_arrives(request):
            second = customer.send("Hello?? are you there")
            answered.append((second.status_code, second.json()))
            return message(text(ASK_NUMBER))

        # The visitor's first message gave them their session (reading the page gives none).
        claude.reset(message(text("Hello! How can I help?")))
        customer.send("Hi")
        claude.reset(answer_while_a_second_message_arrives)
        first = customer.send("Where is my order?")

        assert first.status_code == 200
        [(status, body)] = answered
        assert status == 409
        assert body["error"] == "turn_in_progress"
        assert "still answering" in body["detail"]
        assert [m["text"] for m in customer.transcript().json()["messages"]][2:] == [
            "Where is my order?",
            ASK_NUMBER,
        ]

    @pytest.mark.django_db(transaction=True, serialized_rollback=True)
    def test_a_turn_longer_than_its_lease_keeps_the_conversation(self, claude, customer, settings):
        """The lease is short (a dead worker's conversation is soon free), so a running turn renews it."""
        settings.BOOKLY_TURN_LEASE_SECONDS = 1.5

        seconds: list[HttpResponseBase] = []  # the second message's answer

        def answer_after_three_leases(request):
            time.sleep(3.2)
            seconds.append(customer.send("Hello?? are you there"))
            return message(text(ASK_NUMBER))

        claude.reset(message(text("Hello! How can I help?")))
        customer.send("Hi")  # the first message gives the visitor their session
        claude.reset(answer_after_three_leases)
        assert customer.send("Where is my order?").status_code == 200
        [second] = seconds
        assert second.status_code == 409
        assert int(second["Retry-After"]) >= 1

    @pytest.mark.django_db(transaction=True, serialized_rollback=True)
    def test_a_turn_whose_lease_was_taken_over_answers_409(self, claude, customer):
        def lease_stolen(request):
            Conversation.objects.update(lease_token=uuid.uuid4())
            return message(text(ASK_NUMBER))

        claude.reset(lease_stolen)
        response = customer.send("Where is my order?")
        assert response.status_code == 409
        assert response.json()["error"] == "turn_in_progress"


class TestFailureAtEveryStep:
    """Whatever step fails, the customer's words stay, the history stays valid, the next turn works."""

    def _fail_then_recover(self, claude, customer, failing_script, expected_status, patcher=None):
        claude.reset(*failing_script)
        with patcher or contextlib.nullcontext():
            failed = customer.send("Where is BK-10042? sarah.chen@example.com")
        assert failed.status_code == expected_status
        assert "detail" in failed.json()
        assert Conversation.objects.get().lease_token is None
        assert (
            customer.transcript().json()["messages"][0]["text"] == "Where is BK-10042? sarah.chen@example.com"
        )

        claude.reset(
            message(
                tool_use("lookup_order", {"order_id": "BK-10042", "customer_email": "sarah.chen@example.com"})
            ),
            message(text("Your order BK-10042 was delivered on 2026-03-30.")),
        )
        recovered = customer.send("Please try again")
        assert recovered.status_code == 200
        assert recovered.json()["reply"] == "Your order BK-10042 was delivered on 2026-03-30."
        for request in claude.requests:
            assert messages_problems(request["messages"]) == []

    def test_first_model_call_fails(self, claude, customer):
        self._fail_then_recover(claude, customer, [ErrorReply(503)] * 2, 503)

    def test_model_call_after_a_tool_call_fails(self, claude, customer):
        sarah = {"order_id": "BK-10042", "customer_email": "sarah.chen@example.com"}
        self._fail_then_recover(
            claude, customer, [message(tool_use("lookup_order", sarah)), ErrorReply(401)], 502
        )

    def test_tool_execution_crashes(self, claude, customer):
        sarah = {"order_id": "BK-10042", "customer_email": "sarah.chen@example.com"}
        crash = mock.patch.object(Order.objects, "filter", side_effect=RuntimeError("bug"))
        self._fail_then_recover(claude, customer, [message(tool_use("lookup_order", sarah))], 500, crash)

    def test_final_write_fails(self, claude, customer):
        crash = mock.patch.object(
            ConversationMessage.objects, "bulk_create", side_effect=RuntimeError("disk")
        )
        self._fail_then_recover(claude, customer, [message(text(ASK_NUMBER))], 500, crash)

    def test_storing_the_usage_fails_too(self, claude, customer):
        # The commit fails on the model calls' row, and so does the clean-up's second try at it:
        # the conversation must be free all the same.
        crash = mock.patch.object(ModelCall.objects, "bulk_create", side_effect=RuntimeError("disk"))
        self._fail_then_recover(claude, customer, [message(text(ASK_NUMBER))], 500, crash)

    def test_history_survives_a_restart(self, claude, customer):
        claude.reset(message(text(ASK_NUMBER)))
        customer.send("Where is my order?")
        claude.reset(message(text("Thanks. What is the email address on the order?")))
        customer.send("BK-10042")
        sent = [
            block["text"]
            for m in claude.requests[0]["messages"]
            for block in m["content"]
            if block["type"] == "text"
        ]
        assert sent[0] == "Where is my order?" and ASK_NUMBER in sent and "BK-10042" in sent


class TestServerTiming:
    def test_header_splits_the_time_between_app_model_and_database(self, claude, settings):
        settings.BOOKLY_SERVER_TIMING = True
        customer = ChatClient()  # a new handler picks the setting up

        def slow_model(request):
            time.sleep(0.2)
            return message(text(ASK_NUMBER))

        claude.reset(slow_model)
        header = customer.send("Where is my order?")["Server-Timing"]
        timings = dict(re.findall(r"(\w+);dur=([\d.]+)", header))
        found = re.search(r'desc="(\d+) queries"', header)
        assert found is not None
        queries = int(found.group(1))
        assert float(timings["app"]) >= float(timings["model"]) >= 200
        assert 5 <= queries <= 30

    def test_no_header_unless_enabled(self, claude, customer):
        claude.reset(message(text(ASK_NUMBER)))
        assert "Server-Timing" not in customer.send("Where is my order?")


def test_a_first_message_that_fails_still_keeps_its_conversation(claude):
    """A brand-new visitor whose very first message meets a 503: the session cookie must still be
    set, or the saved message would belong to a conversation nobody can reach again."""
    newcomer = ChatClient()
    newcomer.token = "a" * 32  # a CSRF cookie from elsewhere, but no session yet
    newcomer.http.cookies["csrftoken"] = newcomer.token
    claude.reset(ErrorReply(503), ErrorReply(503))
    assert newcomer.send("Where is my order?").status_code == 503

    claude.reset(message(text(ASK_NUMBER)))
    assert newcomer.send("Hello again").status_code == 200
    sent = [
        block["text"] for block in claude.requests[0]["messages"][0]["content"] if block["type"] == "text"
    ]
    assert "Where is my order?" in sent
    assert Conversation.objects.count() == 1


class TestAMessageTheModelRefuses:
    """A message whose request the model API refuses (400) would fail every later turn the same way."""

    def _sent_texts(self, request: dict) -> list[str]:
        return [
            block["text"]
            for message_ in request["messages"]
            for block in message_["content"]
            if block["type"] == "text"
        ]

    def test_it_is_set_aside_kept_in_the_transcript_and_the_conversation_goes_on(self, claude, customer):
        claude.reset(ErrorReply(400, error_type="invalid_request_error"))
        refused = customer.send("A message the API cannot take")
        assert refused.status_code == 422
        assert refused.json()["error"] == "message_not_processed"
        assert "put it another way" in refused.json()["detail"]

        claude.reset(message(text(ASK_NUMBER)))
        assert customer.send("Where is my order?").status_code == 200
        sent = self._sent_texts(claude.requests[0])
        assert "Where is my order?" in sent
        assert "A message the API cannot take" not in sent
        assert [m["text"] for m in customer.transcript().json()["messages"]] == [
            "A message the API cannot take",
            "Where is my order?",
            ASK_NUMBER,
        ]

    def test_a_failure_that_is_not_the_messages_fault_keeps_it_for_the_next_turn(self, claude, customer):
        claude.reset(ErrorReply(401, error_type="authentication_error"))
        assert customer.send("Where is my order?").status_code == 502
        claude.reset(message(text(ASK_NUMBER)))
        assert customer.send("Hello?").status_code == 200
        assert "Where is my order?" in self._sent_texts(claude.requests[0])
