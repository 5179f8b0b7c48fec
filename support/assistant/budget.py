"""A budget for identity checks: how many order/email pairs one customer may try.

An order's details need its number and the email on it. Both are guessable one
try at a time, so the tries are counted: failed checks (an order or RMA number
with an email that does not match) per order number, per conversation and per
client address, across turns and conversations, in Django's default cache (local
memory for one process; Redis with REDIS_URL, shared by every worker). Once any
count reaches its limit, checks of that scope are refused before the order is
looked up, so a right guess past the limit finds nothing either. The windows are
fixed, from a scope's first failure.
"""

import hashlib
import logging
from dataclasses import dataclass
from enum import StrEnum
from ipaddress import ip_address, ip_network

from django.conf import settings
from django.core.cache import cache

from orders.numbers import ORDER_NUMBERS
from support.insight.metrics import IDENTITY_CHECK_LIMITS

logger = logging.getLogger(__name__)


class CheckLimit(StrEnum):
    """Which limit refused a call: the label of bookly_identity_check_limits_total."""

    CALLS_PER_RESPONSE = "calls_per_response"  # BOOKLY_MAX_TOOL_CALLS_PER_RESPONSE
    ORDER = "order"
    CONVERSATION = "conversation"
    IP = "ip"


@dataclass(frozen=True)
class CheckScope:
    """What one check is counted against: the order or RMA number tried, the conversation, the client's
    address ("" when there is none, as in evaluations: not counted by address)."""

    number: str
    conversation_id: int
    client_address: str = ""


def _client_key(address: str) -> str:
    """The address as the rate limits count it: IPv6 clients by their /64, which one customer holds."""
    try:
        parsed = ip_address(address)
    except ValueError:
        return address
    return str(ip_network(f"{parsed}/64", strict=False)) if parsed.version == 6 else str(parsed)


def _keys(scope: CheckScope) -> dict[CheckLimit, tuple[str, int]]:
    """Each counted scope's cache key (hashed: a number or address is data, not part of a key's syntax)
    and its limit."""
    scopes = {
        # Every number the given one may be (#1104, 1104, BK-1104 reach the same orders): one count.
        CheckLimit.ORDER: (
            "|".join(sorted(form.upper() for form in ORDER_NUMBERS.forms(scope.number))),
            settings.BOOKLY_FAILED_CHECKS_PER_ORDER,
        ),
        CheckLimit.CONVERSATION: (str(scope.conversation_id), settings.BOOKLY_FAILED_CHECKS_PER_CONVERSATION),
    }
    if scope.client_address:
        scopes[CheckLimit.IP] = (_client_key(scope.client_address), settings.BOOKLY_FAILED_CHECKS_PER_IP)
    return {
        limit: (f"bookly:failed-checks:{limit}:{hashlib.sha256(value.encode()).hexdigest()[:32]}", most)
        for limit, (value, most) in scopes.items()
    }


def identity_checks_spent(*, scope: CheckScope) -> CheckLimit | None:
    """The limit this check would pass, if any of its scopes has used up its failed checks; else None.
    Counted in the metric when it refuses."""
    keys = _keys(scope)
    counts = cache.get_many([key for key, _ in keys.values()])
    for limit, (key, most) in keys.items():
        if counts.get(key, 0) >= most:
            IDENTITY_CHECK_LIMITS.labels(limit=limit).inc()
            logger.info("identity check refused: %s limit reached", limit)
            return limit
    return None


def identity_check_failed(*, scope: CheckScope) -> None:
    """Count one failed check against each of its scopes, for BOOKLY_FAILED_CHECKS_WINDOW_MINUTES from
    the scope's first failure."""
    window = settings.BOOKLY_FAILED_CHECKS_WINDOW_MINUTES * 60
    for key, _ in _keys(scope).values():
        # add() starts the window only if none is running; incr() keeps its expiry (local memory and
        # Redis alike) and is atomic in Redis, so workers counting at once lose no failure.
        cache.add(key, 0, timeout=window)
        try:
            cache.incr(key)
        except ValueError:  # the window ended between the two: this failure starts the next
            cache.set(key, 1, timeout=window)


def tool_calls_refused(*, count: int) -> None:
    """Count calls of one model response that were not run, being past BOOKLY_MAX_TOOL_CALLS_PER_RESPONSE."""
    IDENTITY_CHECK_LIMITS.labels(limit=CheckLimit.CALLS_PER_RESPONSE).inc(count)
    logger.info("%d tool calls of one model response not run: over the limit per response", count)
