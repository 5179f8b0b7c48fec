"""No message breaks the built-in model, and no failed turn breaks the conversation after it.

An outside probe sent `"whereismyorder" * 280`: the offline model's splitting of words run together
recursed past Python's limit, and since every later turn sends the history again, that turn and every
later one answered 500, asking for a person included, until the customer reset.
"""

import time

import pytest
from django.conf import settings
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from support.assistant.builtin.model import OfflineModel
from support.assistant.capabilities.registry import TOOLS
from support.assistant.prompts import TURN_REMINDER
from support.models import Conversation, ConversationMessage, ConversationStatus
from support.testing.chat_client import ChatClient

PROBE = "whereismyorder" * 280
SYSTEM = [{"type": "text", "text": "You are Bookly's support assistant."}]

_words = st.sampled_from(["where", "is", "my", "order", "return", "refund", "talk", "to", "a", "human", "bk"])
_run_together = st.lists(_words, min_size=1, max_size=1500).map("".join)
_odd_text = st.text(
    alphabet=st.characters(codec="utf-8", exclude_categories=["Cs"]), min_size=1, max_size=600
)
_mixed = st.lists(st.one_of(_run_together, _odd_text, st.just("\u202e"), st.just("\n" * 50)), max_size=6).map(
    " ".join
)


def _reply_to(text: str):
    message = {
        "role": "user",
        "content": [{"type": "text", "text": text}, {"type": "text", "text": TURN_REMINDER}],
    }
    return OfflineModel().create(
        system=SYSTEM, tools=TOOLS, messages=[message], deadline=time.monotonic() + 30
    )


@hypothesis_settings(
    max_examples=60, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
@given(text=st.one_of(_run_together, _odd_text, _mixed))
def test_any_message_gets_a_reply_in_the_protocols_shape(text):
    text = text[: settings.BOOKLY_MAX_MESSAGE_CHARS]
    reply = _reply_to(text)
    assert reply.stop_reason in {"end_turn", "tool_use"}
    assert reply.content and {block["type"] for block in reply.content} <= {"text", "tool_use"}


# Hypothesis raises the recursion limit while it runs, so the probe's own message is sent here, through
# the real API and at Python's usual limit.
def test_the_probes_message_is_answered_and_so_is_the_next(db, demo_data, offline):
    customer = ChatClient()
    assert customer.send(PROBE).status_code == 200
    after = customer.send("I want to talk to a person")
    assert after.status_code == 200
    assert after.json()["status"] == ConversationStatus.WAITING


class _BreaksOn:
    """The offline model, except that it fails as a bug would whenever the history holds `word`."""

    def __init__(self, word: str):
        self.word, self.offline = word, True
        self.model = OfflineModel()

    def create(self, *, messages, **arguments):
        if self.word in str(messages):
            raise RecursionError("maximum recursion depth exceeded")
        return self.model.create(messages=messages, **arguments)


@pytest.fixture
def breaks_on_kaboom(monkeypatch, offline):
    monkeypatch.setattr("support.assistant.turn.model_for_turn", lambda: _BreaksOn("kaboom"))


def test_a_turn_that_fails_on_its_message_leaves_the_conversation_answerable(db, demo_data, breaks_on_kaboom):
    customer = ChatClient()
    failed = customer.send("kaboom")
    assert failed.status_code == 500
    assert failed.json()["error"] == "internal_error" and "set that message aside" in failed.json()["detail"]

    after = customer.send("How long does shipping take?")
    assert after.status_code == 200 and after.json()["reply"]
    handed = customer.send("I want to talk to a person")
    assert handed.json()["status"] == ConversationStatus.WAITING
    # Kept for staff and in the transcript, never sent to the model again.
    kept = ConversationMessage.objects.get(visible_text="kaboom")
    assert kept.set_aside and kept.conversation == Conversation.objects.get()


def test_a_model_that_is_only_unavailable_sets_nothing_aside(customer, claude):
    from support.testing.messages_stub import ErrorReply

    claude.reset(*[ErrorReply(529, "overloaded_error")] * 2)
    assert customer.send("Where is my order?").status_code == 503
    assert not ConversationMessage.objects.get(visible_text="Where is my order?").set_aside
