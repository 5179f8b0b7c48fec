import uuid
from datetime import timedelta

import pytest
from django.contrib.sessions.backends.db import SessionStore
from django.utils import timezone

from orders.addresses import shipping_address_clean
from orders.models import DeliveryProblem, Event, EventType, Order, ReturnRecord, ReturnStatus
from orders.tests.factories import OrderFactory, OrderItemFactory, delivered_order
from store.clock import store_today
from support.conversations.lease_keeper import leases_renew
from support.conversations.selectors import conversation_return_get_open
from support.conversations.services import (
    NewMessage,
    TurnInProgress,
    conversation_delivery_case_open,
    conversation_order_address_change,
    conversation_order_cancel,
    conversation_return_create,
    conversation_turn_abandon,
    conversation_turn_begin,
    conversation_turn_commit,
    session_handle,
)
from support.models import Conversation, ConversationMessage, MessageRole

pytestmark = pytest.mark.django_db


def _reread(conversation: Conversation) -> Conversation:
    return Conversation.objects.get(pk=conversation.pk)


def _words(words: str) -> NewMessage:
    return NewMessage(MessageRole.USER, [{"type": "text", "text": words}], words)


_running: list = []


@pytest.fixture(autouse=True)
def _turns_end():
    """A turn a test began and left running is abandoned after it, as the turn service would."""
    yield
    while _running:
        lease = _running.pop()
        conversation_turn_abandon(lease=lease, model_calls=[])


def _begin(conversation: Conversation | None, words: str = "Hello", session=None):
    lease, history = conversation_turn_begin(
        session=session, conversation=conversation, customer_message=_words(words)
    )
    _running.append(lease)
    return lease, history


def _answer(lease, reply: str, *, eligibility_verified=()) -> None:
    """End the turn as the turn service does when the model answered."""
    conversation_turn_commit(
        lease=lease,
        first=lease.next_position,
        messages=[NewMessage(MessageRole.ASSISTANT, [{"type": "text", "text": reply}], reply)],
        model_calls=[],
        eligibility_verified=eligibility_verified,
    )


def _stored(conversation: Conversation) -> list[str]:
    return list(
        ConversationMessage.objects.filter(conversation=conversation)
        .order_by("position")
        .values_list("visible_text", flat=True)
    )


@pytest.fixture
def session():
    store = SessionStore()
    store.create()
    return store


class TestTurnBegin:
    """The lease is a compare-and-set on the row as read: a read that has gone stale never takes it."""

    def test_a_free_conversation_is_taken_its_turn_counted_and_the_words_stored(self):
        conversation = Conversation.objects.create(session_handle="s1", eligibility_verified=["BK-10042"])
        lease, history = _begin(_reread(conversation), "Where is my order?")
        row = _reread(conversation)
        assert (row.lease_token, row.turn_count, lease.number) == (lease.token, 1, 1)
        assert row.eligibility_verified == ["BK-10042"]
        assert _stored(conversation) == ["Where is my order?"]
        assert [message["visible_text"] for message in history] == ["Where is my order?"]

    def test_the_history_comes_back_in_order_with_the_new_words_last(self):
        conversation = Conversation.objects.create(session_handle="s1")
        lease, _ = _begin(_reread(conversation), "first")
        _answer(lease, "reply")
        lease, history = _begin(_reread(conversation), "second")
        assert [message["visible_text"] for message in history] == ["first", "reply", "second"]
        assert lease.next_position == 3

    def test_a_turn_that_began_and_ended_after_the_read_wins(self):
        conversation = Conversation.objects.create(session_handle="s1")
        stale = _reread(conversation)
        # Another worker's whole turn, between our read and our take: it passed an eligibility check.
        lease, _ = _begin(_reread(conversation))
        conversation_turn_commit(
            lease=lease,
            first=lease.next_position,
            messages=[],
            model_calls=[],
            eligibility_verified=["BK-10042"],
        )
        with pytest.raises(TurnInProgress):
            _begin(stale, "stale")
        assert _reread(conversation).turn_count == 1
        assert "stale" not in _stored(conversation)

    def test_a_slow_turn_that_commits_after_its_lease_expired_is_not_overtaken_with_stale_state(self):
        conversation = Conversation.objects.create(session_handle="s1", turn_count=3)
        Conversation.objects.filter(pk=conversation.pk).update(
            lease_token=uuid.uuid4(), lease_expires_at=timezone.now() - timedelta(seconds=1)
        )
        stale = _reread(conversation)
        # The slow turn (lease expired, but nobody took it over) commits its guard state.
        Conversation.objects.filter(pk=conversation.pk).update(
            lease_token=None, lease_expires_at=None, eligibility_verified=["BK-10042"]
        )
        with pytest.raises(TurnInProgress):
            _begin(stale)

    def test_an_expired_lease_nobody_ended_is_taken_over(self):
        conversation = Conversation.objects.create(session_handle="s1", turn_count=3)
        Conversation.objects.filter(pk=conversation.pk).update(
            lease_token=uuid.uuid4(), lease_expires_at=timezone.now() - timedelta(seconds=1)
        )
        lease, _ = _begin(_reread(conversation))
        assert (_reread(conversation).lease_token, lease.number) == (lease.token, 4)

    def test_a_live_lease_is_respected_without_writing(self):
        conversation = Conversation.objects.create(session_handle="s1")
        _begin(_reread(conversation), "first")
        with pytest.raises(TurnInProgress):
            _begin(_reread(conversation), "second")
        assert _reread(conversation).turn_count == 1
        assert _stored(conversation) == ["first"]

    def test_a_first_message_opens_a_conversation_that_holds_its_lease(self, session):
        lease, history = _begin(None, "Where is my order?", session=session)
        row = Conversation.objects.get(
            session_handle=session_handle(session_key=session.session_key), ended_at__isnull=True
        )
        assert (row, row.lease_token, row.turn_count, lease.number) == (lease.conversation, lease.token, 1, 1)
        assert _stored(row) == ["Where is my order?"]
        assert [message["visible_text"] for message in history] == ["Where is my order?"]

    def test_two_first_messages_at_once_end_in_one_conversation(self, session):
        """Two tabs of one session send their first message at the same moment: the database lets
        one open a conversation, and the other finds that conversation's turn running."""
        first, _ = _begin(None, "from the first tab", session=session)
        with pytest.raises(TurnInProgress):
            _begin(None, "from the second tab", session=session)  # it read no conversation either
        assert Conversation.objects.count() == 1
        assert _stored(first.conversation) == ["from the first tab"]

    def test_an_ended_conversation_is_not_taken(self):
        conversation = Conversation.objects.create(session_handle="s1", ended_at=timezone.now())
        with pytest.raises(TurnInProgress):
            _begin(_reread(conversation))
        assert _stored(conversation) == []


class TestTurnEnd:
    def test_a_commit_whose_lease_was_taken_over_stores_nothing(self):
        conversation = Conversation.objects.create(session_handle="s1")
        lease, _ = _begin(_reread(conversation), "words")
        Conversation.objects.filter(pk=conversation.pk).update(lease_token=uuid.uuid4())
        with pytest.raises(TurnInProgress):
            conversation_turn_commit(
                lease=lease,
                first=lease.next_position,
                messages=[NewMessage(MessageRole.ASSISTANT, [{"type": "text", "text": "late"}], "late")],
                model_calls=[],
                eligibility_verified=["BK-10042"],
            )
        assert _stored(conversation) == ["words"]
        assert _reread(conversation).eligibility_verified == []

    def test_a_turn_set_aside_after_its_lease_was_taken_over_touches_nothing_of_the_next_turn(self):
        conversation = Conversation.objects.create(session_handle="s1")
        first, _ = _begin(_reread(conversation), "the first tab's words")
        Conversation.objects.filter(pk=conversation.pk).update(
            lease_expires_at=timezone.now() - timedelta(seconds=1)
        )
        _begin(_reread(conversation), "the second tab's words")  # takes the expired lease over
        conversation_turn_abandon(lease=first, model_calls=[], set_aside_unanswered=True)
        assert not ConversationMessage.objects.filter(set_aside=True).exists()

    def test_a_refused_turn_sets_its_unanswered_words_aside_and_only_those(self):
        conversation = Conversation.objects.create(session_handle="s1")
        lease, _ = _begin(_reread(conversation), "answered")
        _answer(lease, "reply")
        lease, _ = _begin(_reread(conversation), "refused")
        conversation_turn_abandon(lease=lease, model_calls=[], set_aside_unanswered=True)
        assert list(
            ConversationMessage.objects.filter(set_aside=True).values_list("visible_text", flat=True)
        ) == ["refused"]

    def test_an_abandoned_turn_frees_the_conversation_and_keeps_the_words(self):
        conversation = Conversation.objects.create(session_handle="s1")
        lease, _ = _begin(_reread(conversation), "words")
        conversation_turn_abandon(lease=lease, model_calls=[])
        assert _reread(conversation).lease_token is None
        assert _stored(conversation) == ["words"]
        _begin(_reread(conversation), "again")


class TestLeaseKeeper:
    def test_a_running_turns_lease_is_renewed_and_an_ended_turns_is_not(self):
        conversation = Conversation.objects.create(session_handle="s1")
        lease, _ = _begin(_reread(conversation), "words")
        almost_gone = timezone.now() + timedelta(seconds=1)
        Conversation.objects.filter(pk=conversation.pk).update(lease_expires_at=almost_gone)

        assert leases_renew() == 1
        renewed = _reread(conversation).lease_expires_at
        assert renewed is not None and renewed > almost_gone + timedelta(seconds=5)

        conversation_turn_commit(
            lease=lease, first=lease.next_position, messages=[], model_calls=[], eligibility_verified=[]
        )
        assert leases_renew() == 0

    def test_a_turn_past_its_deadline_is_no_longer_renewed(self, settings):
        settings.BOOKLY_TURN_DEADLINE_SECONDS = -1000  # long past, as for a turn stuck in a call
        conversation = Conversation.objects.create(session_handle="s1")
        _begin(_reread(conversation), "words")
        assert leases_renew() == 0

    def test_a_first_turns_lease_is_renewed_too(self, session):
        _begin(None, "words", session=session)
        assert leases_renew() == 1


@pytest.mark.usefixtures("demo_data")
def test_a_conversation_finds_only_its_own_open_return_of_those_items():
    order = Order.objects.get(number="BK-10042")
    items = list(order.items.all())
    ours, theirs = (Conversation.objects.create(session_handle=key) for key in ("ours", "theirs"))
    record = conversation_return_create(
        conversation=theirs, order=order, reason="Damaged", items=items[:1], today=store_today()
    )

    assert conversation_return_get_open(conversation=theirs, order=order, items=items[:1]) == record
    assert conversation_return_get_open(conversation=theirs, order=order, items=None) == record
    assert conversation_return_get_open(conversation=ours, order=order, items=items[:1]) is None
    assert conversation_return_get_open(conversation=theirs, order=order, items=items) is None
    ReturnRecord.objects.filter(pk=record.pk).update(status=ReturnStatus.CANCELLED)
    assert conversation_return_get_open(conversation=theirs, order=order, items=items[:1]) is None


def test_what_a_customer_does_in_a_conversation_reaches_the_store_as_theirs_with_its_id():
    conversation = Conversation.objects.create(session_handle="s1")
    to_cancel, to_move = OrderFactory.create(), OrderFactory.create()
    OrderItemFactory(order=to_cancel)
    OrderItemFactory(order=to_move)
    today = store_today()

    conversation_order_cancel(conversation=conversation, order=to_cancel)
    conversation_order_address_change(
        conversation=conversation,
        order=to_move,
        address=shipping_address_clean(
            fields={
                "to": "Ana Diaz",
                "line1": "12 Elm St",
                "city": "Springfield",
                "state": "IL",
                "zip": "62701",
                "country": "US",
            }
        ),
    )
    delivered = delivered_order(days_ago=2, today=today)
    conversation_return_create(
        conversation=conversation, order=delivered, reason="Torn", items=None, today=today
    )
    conversation_delivery_case_open(
        conversation=conversation, order=delivered, problem=DeliveryProblem.LATE, items=None, details=""
    )

    told = {event.type: event.data["by"] for event in Event.objects.all()}
    assert set(told) == {
        EventType.ORDER_CANCELLED,
        EventType.ORDER_ADDRESS_CHANGED,
        EventType.RETURN_CREATED,
        EventType.DELIVERY_CASE_OPENED,
    }
    assert all(by == {"kind": "customer", "conversation_id": conversation.pk, "staff_member": None}
               for by in told.values())  # fmt: skip
