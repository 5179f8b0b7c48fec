"""Changes the store did not make, as the chat keeps them: which the customer has not been told of yet,
and the message that tells them.

A cancellation or a new address the customer asked for in the chat, of an order the shop platform that
keeps it must change first, is only asked of the shop: the customer reads "I have asked the store to
…". When the shop refuses it or fails for good (orders.services.order_change_shop_failed, which also
emails the customer), the chat tells the customer once (ConversationOrderChange.customer_told_at):
in the reply to their next message in that conversation, or in the next conversation that looks the
order up (support.assistant.turn), or, while their page is open on that conversation, as a message of
its own the next time the page asks for news (support.assistant.not_made, for GET /api/chat and the
page). What they read is worded by the assistant; this room stores it.
"""

from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime

from django.db import transaction
from django.db.models import Exists, Max, OuterRef, Q
from django.utils import timezone

from orders.models import Order, OrderChange, OrderChangeKind, OrderChangeState
from orders.selectors import order_change_in_effect
from support.conversations.models import (
    Conversation,
    ConversationMessage,
    ConversationOrderChange,
    MessageRole,
)
from support.conversations.services import storable


@dataclass(frozen=True)
class ChangeNotMade:
    """A change the store did not make, not told yet: the order as it is now, the kind of change, and
    the conversation links it is told by (a change asked twice and not made twice is told once)."""

    order: Order
    kind: OrderChangeKind
    links: tuple[int, ...]
    asked_at: datetime  # when it was last asked


def _latest_of_kind():
    # No change of the same kind of the same order since: one made or asked since (by staff, or the
    # customer again) has the last word, and the earlier one is no news any more.
    return ~Exists(
        OrderChange.objects.filter(
            order_id=OuterRef("order_change__order_id"),
            kind=OuterRef("order_change__kind"),
            pk__gt=OuterRef("order_change_id"),
        )
    )


def _gathered(links) -> list[ChangeNotMade]:
    """The links' changes, one per order and kind, oldest first."""
    found: dict[tuple[int, str], ChangeNotMade] = {}
    for link in links:
        change = link.order_change
        if order_change_in_effect(change=change, order=change.order):
            continue  # the shop made it itself since: no news
        earlier = found.get((change.order_id, change.kind))
        found[(change.order_id, change.kind)] = ChangeNotMade(
            order=change.order,
            kind=OrderChangeKind(change.kind),
            links=(*(earlier.links if earlier else ()), link.pk),
            asked_at=change.changed_at,
        )
    return list(found.values())


def changes_not_made_untold(
    *, conversation_id: int | None = None, order_ids: Collection[int] = ()
) -> list[ChangeNotMade]:
    """The changes the store did not make that the customer has not been told of: those asked in the
    conversation, and those of the orders given (found with the customer's email), oldest first."""
    where = Q(conversation_id=conversation_id) if conversation_id is not None else Q(pk__in=[])
    if order_ids:
        where |= Q(order_change__order_id__in=list(order_ids))
    links = (
        ConversationOrderChange.objects.filter(where)
        .filter(
            _latest_of_kind(), customer_told_at__isnull=True, order_change__state=OrderChangeState.SHOP_FAILED
        )
        .select_related("order_change__order")
        .order_by("order_change_id")
    )
    return _gathered(links)


@dataclass(frozen=True)
class StoreNews:
    """What a conversation still has to hear from the store: whether a change asked in it waits for the
    shop, and the changes asked in it the store did not make, not told yet."""

    awaiting: bool
    not_made: list[ChangeNotMade]

    @property
    def pending(self) -> bool:
        return self.awaiting or bool(self.not_made)


def conversation_store_news(*, conversation_id: int) -> StoreNews:
    """One query: a conversation that asked for no change, or was told all, has none."""
    links = list(
        ConversationOrderChange.objects.filter(
            conversation_id=conversation_id,
            customer_told_at__isnull=True,
            order_change__state__in=[OrderChangeState.AWAITING_SHOP, OrderChangeState.SHOP_FAILED],
        )
        .annotate(latest=_latest_of_kind())
        .select_related("order_change__order")
        .order_by("order_change_id")
    )
    return StoreNews(
        awaiting=any(link.order_change.state == OrderChangeState.AWAITING_SHOP for link in links),
        not_made=_gathered(
            link for link in links if link.latest and link.order_change.state == OrderChangeState.SHOP_FAILED
        ),
    )


def changes_not_made_told(*, links: Collection[int], now=None) -> int:
    """Record that the customer was told (in the caller's transaction); a link told already keeps its
    time. Returns how many were not told before."""
    if not links:
        return 0
    return ConversationOrderChange.objects.filter(pk__in=list(links), customer_told_at__isnull=True).update(
        customer_told_at=now or timezone.now()
    )


def conversation_not_made_message_add(
    *, conversation: Conversation, text: str, links: Collection[int], model_state: dict | None = None
) -> bool:
    """Tell the customer in a message of its own, after the last, and record them told, together; only
    while the conversation is open and no turn holds it (a running turn has counted the positions it
    will store at, and tells them itself in its reply). Returns whether the message was added."""
    with transaction.atomic():
        locked = Conversation.objects.select_for_update().get(pk=conversation.pk)
        now = timezone.now()
        if locked.ended_at is not None or locked.lease_held(now):
            return False
        if not changes_not_made_told(links=links, now=now):
            return False  # told meanwhile (another tab's request)
        if locked.lease_token:
            # A lapsed lease: a turn still alive past it must fail its commit cleanly, not collide
            # with the position this message takes (as a staff reply does, support.conversations.handoff).
            Conversation.objects.filter(pk=locked.pk).update(lease_token=None, lease_expires_at=None)
        last = locked.messages.aggregate(last=Max("position"))["last"]
        ConversationMessage.objects.create(
            conversation=locked,
            position=0 if last is None else last + 1,
            turn=locked.turn_count,
            role=MessageRole.ASSISTANT,
            content=[{"type": "text", "text": storable(text)}],
            visible_text=storable(text),
            model_state=storable(model_state),
        )
    return True
