"""Customer feedback: a vote on each reply and a rating of the conversation, over the JSON API and the
page's forms; one vote per reply, kept with the turn's trace."""

import json

import pytest

from support.conversations.services import session_handle
from support.models import Conversation, TurnTrace
from support.testing.chat_client import ChatClient
from support.testing.messages_stub import ErrorReply, message, text
from support.testing.metric_counts import Counts

pytestmark = pytest.mark.usefixtures("demo_data", "offline")

QUESTION = "How long does shipping take?"


@pytest.fixture
def answered(customer):
    """A customer whose question the assistant answered (turn 1)."""
    assert customer.send(QUESTION).json()["votable"] is True
    return customer


def test_a_vote_is_kept_with_the_turns_trace_and_a_second_replaces_it(answered):
    counts = Counts()
    assert answered.feedback({"turn": 1, "helpful": True}).json() == {"turn": 1, "helpful": True}
    assert answered.feedback({"turn": 1, "helpful": False}).status_code == 200

    assert TurnTrace.objects.get(turn=1).helpful is False
    [_, reply] = answered.transcript().json()["messages"]
    assert (reply["turn"], reply["helpful"]) == (1, False)
    assert counts.moved("bookly_feedback_total", rating="helpful") == 1
    assert counts.moved("bookly_feedback_total", rating="not_helpful") == 1


def test_a_rating_needs_an_answer_first_and_a_second_replaces_it(customer, claude):
    assert customer.feedback({"rating": 4}).json()["error"] == "no_conversation"
    claude.reset(*[ErrorReply(529, "overloaded_error")] * 2)
    customer.send(QUESTION)  # kept, but nobody answered
    assert customer.feedback({"rating": 4}).json()["error"] == "nothing_to_rate"

    claude.reset(message(text("What is the order number? It starts with BK-.")))
    customer.send("Where is my order?")
    counts = Counts()
    assert customer.feedback({"rating": 2, "comment": "  Too slow  "}).json() == {"rating": 2}
    assert customer.feedback({"rating": 5}).status_code == 200

    conversation = Conversation.objects.get()
    assert (conversation.rating, conversation.rating_comment) == (5, "")
    assert counts.moved("bookly_feedback_total", rating="2") == 1


@pytest.mark.parametrize(
    ("body", "code"),
    [
        ("not json", "invalid_json"),
        ("", "invalid_feedback"),
        ("[1, true]", "invalid_feedback"),
        ({}, "invalid_feedback"),
        ({"turn": 1}, "invalid_feedback"),
        ({"turn": 1, "helpful": True, "rating": 5}, "invalid_feedback"),
        ({"turn": "1", "helpful": True}, "invalid_feedback"),
        ({"turn": True, "helpful": True}, "invalid_feedback"),
        ({"turn": 1, "helpful": "yes"}, "invalid_feedback"),
        ({"turn": 1, "helpful": None}, "invalid_feedback"),
        ({"turn": 2, "helpful": True}, "unknown_reply"),
        ({"turn": -1, "helpful": True}, "unknown_reply"),
        ({"turn": 1, "helpful": True, "conversation": 7}, "invalid_feedback"),
        ({"turn": 1, "helpful": True, "conversation": "0123456789abcdef"}, "conversation_ended"),
        ({"rating": 0}, "invalid_rating"),
        ({"rating": 6}, "invalid_rating"),
        ({"rating": 4.5}, "invalid_rating"),
        ({"rating": True}, "invalid_rating"),
        ({"rating": "5"}, "invalid_rating"),
        ({"rating": 3, "comment": 5}, "invalid_comment"),
        ({"rating": 3, "comment": "x" * 1001}, "invalid_comment"),
    ],
)
def test_anything_else_is_a_400_in_the_apis_shape_and_changes_nothing(answered, body, code):
    response = answered.feedback(body)

    assert response.status_code == 400
    assert response.json()["error"] == code and response.json()["detail"]
    assert TurnTrace.objects.get().helpful is None
    assert Conversation.objects.get().rating is None


def test_only_the_sessions_own_replies_take_its_votes(answered):
    stranger = ChatClient()
    stranger.send("What is your return policy?")

    assert stranger.feedback({"turn": 1, "helpful": False}).status_code == 200
    mine = TurnTrace.objects.get(
        conversation__session_handle=session_handle(session_key=answered.http.session.session_key)
    )
    assert mine.helpful is None


def test_a_failed_turn_takes_no_vote(customer, claude):
    claude.reset(*[ErrorReply(529, "overloaded_error")] * 2)
    assert customer.send("Where is my order?").status_code == 503
    assert customer.feedback({"turn": 1, "helpful": False}).json()["error"] == "unknown_reply"


def test_a_page_left_on_an_ended_conversation_votes_in_no_other(answered, claude):
    old = answered.transcript().json()["conversation"]
    answered.reset()
    claude.reset(message(text("What is the order number? It starts with BK-.")))
    new = answered.send("Where is my order?").json()["conversation"]

    response = answered.feedback({"turn": 1, "helpful": False, "conversation": old})
    assert response.status_code == 400 and response.json()["error"] == "conversation_ended"
    assert not TurnTrace.objects.filter(helpful__isnull=False).exists()
    assert answered.feedback({"turn": 1, "helpful": False, "conversation": new}).status_code == 200
    assert answered.feedback({"rating": 3, "conversation": old}).json()["error"] == "conversation_ended"


def test_feedback_takes_post_only(answered):
    response = answered.http.get("/api/chat/feedback")
    assert response.status_code == 405 and response.json()["error"] == "method_not_allowed"


class TestWithoutJavaScript:
    def test_a_vote_from_the_page_is_kept_and_shown_pressed(self, client):
        client.post("/chat/send", {"message": QUESTION})
        response = client.post("/chat/feedback", {"turn": "1", "helpful": "no"})

        assert response["Location"] == "/#reply-1"
        assert TurnTrace.objects.get().helpful is False
        html = client.get("/").content.decode()
        reply = html[html.index('id="reply-1"') :]
        assert 'value="no" class="vote__button" aria-pressed="true"' in reply
        assert 'value="yes" class="vote__button" aria-pressed="false"' in reply

    def test_a_rating_from_the_page_is_kept_and_shown(self, client):
        client.post("/chat/send", {"message": QUESTION})
        client.post("/chat/feedback", {"rating": "4", "comment": "Clear answer"})

        assert Conversation.objects.get().rating == 4
        html = client.get("/").content.decode()
        assert "You rated this conversation 4 out of 5" in html
        assert 'value="4" required checked' in html

    def test_a_rating_without_a_choice_is_said_in_words(self, client):
        client.post("/chat/send", {"message": QUESTION})
        client.post("/chat/feedback", {"comment": "Hmm"})

        assert "Choose a rating from 1 (poor) to 5 (excellent)." in client.get("/").content.decode()
        assert Conversation.objects.get().rating is None

    def test_the_rating_is_offered_once_someone_answered(self, client):
        assert (
            'id="rating" class="rating" aria-labelledby="rating-title" hidden'
            in client.get("/").content.decode()
        )
        client.post("/chat/send", {"message": QUESTION})
        assert 'aria-labelledby="rating-title">' in client.get("/").content.decode()


def test_a_reply_without_a_trace_takes_no_vote(claude, customer):
    """Replies stored before traces existed show no vote buttons (there is nothing to keep the vote with)."""
    claude.reset(message(text("Hello! I can help with orders, returns and store policies.")))
    customer.send("hi")
    TurnTrace.objects.all().delete()
    [_, reply] = customer.transcript().json()["messages"]
    assert "turn" not in reply
    assert json.loads(customer.feedback({"turn": 1, "helpful": True}).content)["error"] == "unknown_reply"


def test_a_fixed_notice_takes_no_vote_only_the_assistants_own_answers_do(customer):
    response = customer.send("I want to talk to a person")  # answered by the handover's fixed words

    assert response.json()["votable"] is False
    assert customer.feedback({"turn": 1, "helpful": False}).json()["error"] == "unknown_reply"
    [_, notice] = customer.transcript().json()["messages"]
    assert "passed this conversation to our support team" in notice["text"]
    assert "turn" not in notice  # the page shows no "Was this helpful?" under it
