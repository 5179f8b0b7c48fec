"""The built-in model's flow is state, not wording: what it waits for is data it records with its
reply (ModelReply.state), never found again by looking for its own sentences in the history."""

import dataclasses
import re

import pytest

from support.assistant.builtin.model import OfflineModel
from support.assistant.request import history_for_request, with_cache_point
from support.assistant.understanding.wording import Waiting
from support.conversations.models import ConversationMessage, MessageRole
from support.evals.runner import scenario_run
from support.evals.scenarios import SCENARIOS
from support.llm.protocol import OFFER_PERSON
from support.llm.types import ModelReply
from support.testing.chat_client import ChatClient

_SENTENCE_END_RE = re.compile(r"(?<=[.?!])\s+(?=[A-Z])")


# Said another way, as an editor might: each of the model's questions changes at least one of these.
_OTHER_WORDS = (("What is ", "What's "), ("Would you like me to ", "Shall I "), ("Which ", "And which "))


def reworded(text: str) -> str:
    """The same reply said another way: its sentences in reverse order, its questions in other words
    ("Please reply yes or no. Shall I start this return?")."""
    # The offer of a person is the system prompt's wording, shared by every model: the validator holds
    # any other words echoing the prompt for a leak.
    text = text.replace(OFFER_PERSON, "\0")
    for words, others in _OTHER_WORDS:
        text = text.replace(words, others)
    return " ".join(reversed(_SENTENCE_END_RE.split(text))).replace("\0", OFFER_PERSON)


class RewordingModel:
    """The built-in model, except that every reply it writes reaches the customer (and the history
    the next turn reads) reworded: a flow that recognised its own sentences would lose its place."""

    def __init__(self):
        self.model = OfflineModel()
        self.offline, self.name, self.keeps_state = True, self.model.name, True
        self.provider = self.model.provider

    def create(self, **request) -> ModelReply:
        reply = self.model.create(**request)
        content = [
            {**block, "text": reworded(block["text"])} if block["type"] == "text" else block
            for block in reply.content
        ]
        return dataclasses.replace(reply, content=content)


def test_a_reply_is_reworded_beyond_recognition():
    said = "Would you like me to start this return? Please reply yes or no."
    assert reworded(said) == "Please reply yes or no. Shall I start this return?"
    assert reworded("Which order is it about?") == "And which order is it about?"


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda scenario: scenario.name)
def test_every_scenario_passes_with_every_sentence_reworded(demo_data, scenario):
    assert scenario_run(scenario, model=RewordingModel()) == []


def test_a_question_records_what_the_model_waits_for(db):
    reply = OfflineModel().create(
        system=[],
        tools=[],
        messages=[{"role": "user", "content": [{"type": "text", "text": "Where is my order?"}]}],
        deadline=0,
    )
    assert reply.state == {"waiting_for": Waiting.ORDER_NUMBER}


def test_a_state_that_is_not_ours_is_read_as_none(db):
    """A history is input: a state of another shape waits for nothing, and breaks nothing."""
    for state in ({"waiting_for": "launch codes"}, {"waiting_for": ["x"]}, "confirm_return", 7):
        reply = OfflineModel().create(
            system=[],
            tools=[],
            messages=[
                {"role": "user", "content": [{"type": "text", "text": "I want to return a book"}]},
                {"role": "assistant", "content": [{"type": "text", "text": "Okay."}], "state": state},
                {"role": "user", "content": [{"type": "text", "text": "yes"}]},
            ],
            deadline=0,
        )
        assert reply.stop_reason == "end_turn"


def test_a_provider_is_never_sent_the_state():
    stored: list[dict] = [
        {"role": "user", "content": [{"type": "text", "text": "Where is my order?"}], "model_state": None},
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "What is the order number?"}],
            "model_state": {"waiting_for": "order_number"},
        },
        {"role": "user", "content": [{"type": "text", "text": "BK-10042"}], "model_state": None},
    ]
    history = history_for_request(stored)
    assert history[1]["state"] == {"waiting_for": "order_number"}
    assert all("state" not in message for message in with_cache_point(history, keeps_state=False))
    assert with_cache_point(history, keeps_state=True)[1]["state"] == {"waiting_for": "order_number"}


class _SaysTooMuch(RewordingModel):
    """The built-in model, except that its question carries a phone number no tool gave."""

    def create(self, **request) -> ModelReply:
        reply = self.model.create(**request)
        content = [
            {"type": "text", "text": f"{block['text']} Or call 555 010 0199."} for block in reply.content
        ]
        return dataclasses.replace(reply, content=content)


def test_a_reply_the_validator_replaced_is_stored_without_its_state(db, demo_data, monkeypatch):
    monkeypatch.setattr("support.assistant.turn.model_for_turn", _SaysTooMuch)
    ChatClient().send("Where is my order?")
    reply = ConversationMessage.objects.filter(role=MessageRole.ASSISTANT).get()
    assert reply.violations == ["ungrounded_phone"]
    assert reply.model_state is None  # the customer never read the question it waits on


def test_staff_words_after_the_model_s_question_leave_it_waiting_for_nothing():
    stored: list[dict] = [
        {"role": "user", "content": [{"type": "text", "text": "Where is my order?"}], "model_state": None},
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "What is the order number?"}],
            "model_state": {"waiting_for": "order_number"},
        },
        {"role": "staff", "content": [{"type": "text", "text": "Hi, Anna here."}], "model_state": None},
    ]
    [_, ours] = history_for_request(stored)
    assert "state" not in ours and len(ours["content"]) == 2
