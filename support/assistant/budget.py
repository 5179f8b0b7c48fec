"""A budget for identity checks: failed checks slow and stop the guesser, never the order's owner.

An order's details need its number and the email on it. Both are guessable one try at a time, so the
failed checks (an order or RMA number with an email that does not match, or a wrong one-time code) are
counted in Django's default cache (local memory for one process; Redis with REDIS_URL, shared by every
worker), each count for a fixed window from its first failure:
- per client: the conversation, the browser's session and the client's address (IPv6 by its /64).
  After a client's second failure each further check waits a growing delay (2 s, 4 s, 8 s, ...:
  BOOKLY_FAILED_CHECK_DELAY_SECONDS doubled), and once a count reaches its limit that client's checks
  stop, before the order is looked up: a right guess past the limit finds nothing either.
- per order number, whoever tries: past BOOKLY_FAILED_CHECKS_PER_ORDER the order is never refused, but
  a check asks for more (support.assistant.check_codes): a one-time code emailed to the order's
  address. Numbers are sequential, so a refusal here would let anyone keep every order locked.
A customer the store signed in is never refused for their own orders (checked with the email the store
vouches for), and neither is one who found the order earlier in the same conversation.
"""

import hashlib
import logging
import math
import time
from dataclasses import dataclass
from enum import StrEnum
from ipaddress import ip_address, ip_network

from django.conf import settings
from django.core.cache import cache

from orders.numbers import ORDER_NUMBERS
from support.insight.metrics import IDENTITY_CHECK_LIMITS

logger = logging.getLogger(__name__)

# The longest a client waits between two checks, however many failed.
_MAX_DELAY_SECONDS = 15 * 60


class CheckLimit(StrEnum):
    """Which limit held a call back: the label of bookly_identity_check_limits_total."""

    CALLS_PER_RESPONSE = "calls_per_response"  # BOOKLY_MAX_TOOL_CALLS_PER_RESPONSE
    ORDER = "order"  # past it, a one-time code to the order's email is asked for (never a refusal)
    CONVERSATION = "conversation"
    SESSION = "session"
    IP = "ip"
    DELAY = "delay"  # a client's next check came before its growing delay had passed


# The limits that stop a client's checks (the order's asks for a code instead).
_CLIENT_LIMITS = (CheckLimit.CONVERSATION, CheckLimit.SESSION, CheckLimit.IP)


@dataclass(frozen=True)
class CheckScope:
    """What one check is counted against: the order or RMA number tried, the conversation, the browser's
    session ("" for none) and the client's address ("" when there is none, as in evaluations: not
    counted by it)."""

    number: str
    conversation_id: int
    client_address: str = ""
    session: str = ""


@dataclass(frozen=True)
class ClientHeld:
    """Why a client's check is not made now: a limit used up, or its delay not yet passed (then how many
    seconds are left)."""

    limit: CheckLimit
    retry_after: int = 0


def _client_key(address: str) -> str:
    """The address as the rate limits count it: IPv6 clients by their /64, which one customer holds."""
    try:
        parsed = ip_address(address)
    except ValueError:
        return address
    return str(ip_network(f"{parsed}/64", strict=False)) if parsed.version == 6 else str(parsed)


def _hashed(kind: str, limit: CheckLimit, value: str) -> str:
    # Hashed: a number or an address is data, not part of a key's syntax.
    return f"bookly:{kind}:{limit}:{hashlib.sha256(value.encode()).hexdigest()[:32]}"


def _keys(scope: CheckScope) -> dict[CheckLimit, tuple[str, int]]:
    """Each counted scope's cache key and its limit."""
    scopes = {
        # Every number the given one may be (#1104, 1104, BK-1104 reach the same orders): one count.
        CheckLimit.ORDER: (
            "|".join(sorted(form.upper() for form in ORDER_NUMBERS.forms(scope.number))),
            settings.BOOKLY_FAILED_CHECKS_PER_ORDER,
        ),
        CheckLimit.CONVERSATION: (str(scope.conversation_id), settings.BOOKLY_FAILED_CHECKS_PER_CONVERSATION),
    }
    if scope.session:
        scopes[CheckLimit.SESSION] = (scope.session, settings.BOOKLY_FAILED_CHECKS_PER_SESSION)
    if scope.client_address:
        scopes[CheckLimit.IP] = (_client_key(scope.client_address), settings.BOOKLY_FAILED_CHECKS_PER_IP)
    return {limit: (_hashed("failed-checks", limit, value), most) for limit, (value, most) in scopes.items()}


def _delay_keys(scope: CheckScope) -> list[str]:
    return [
        key.replace("failed-checks", "check-delay", 1)
        for limit, (key, _) in _keys(scope).items()
        if limit in _CLIENT_LIMITS
    ]


def _now() -> float:
    return time.time()


def client_checks_held(*, scope: CheckScope) -> ClientHeld | None:
    """Why this client may not make the check now (a limit of theirs used up, or their delay running),
    or None. Counted in the metric when it holds one back."""
    keys = _keys(scope)
    delays = _delay_keys(scope)
    found = cache.get_many([key for key, _ in keys.values()] + delays)
    held = None
    for limit in _CLIENT_LIMITS:
        if limit in keys and found.get(keys[limit][0], 0) >= keys[limit][1]:
            held = ClientHeld(limit)
            break
    else:
        until = max((found[key] for key in delays if key in found), default=0.0)
        if until > _now():
            held = ClientHeld(CheckLimit.DELAY, retry_after=math.ceil(until - _now()))
    if held is not None:
        IDENTITY_CHECK_LIMITS.labels(limit=held.limit).inc()
        logger.info("identity check held back: %s", held.limit)
    return held


def order_checks_spent(*, scope: CheckScope) -> bool:
    """Whether this order number has had its failed checks from anyone: a check of it then needs a
    one-time code too (counted in the metric)."""
    key, most = _keys(scope)[CheckLimit.ORDER]
    spent = cache.get(key, 0) >= most
    if spent:
        IDENTITY_CHECK_LIMITS.labels(limit=CheckLimit.ORDER).inc()
    return spent


def identity_check_failed(*, scope: CheckScope, order_too: bool = True) -> None:
    """Count one failed check against each of its scopes (the order number's only with `order_too`), for
    BOOKLY_FAILED_CHECKS_WINDOW_MINUTES from the scope's first failure; from the client's second failure
    on, their next check waits, twice as long after each."""
    window = settings.BOOKLY_FAILED_CHECKS_WINDOW_MINUTES * 60
    failures = 0
    for limit, (key, _) in _keys(scope).items():
        if limit == CheckLimit.ORDER and not order_too:
            continue
        # add() starts the window only if none is running; incr() keeps its expiry (local memory and
        # Redis alike) and is atomic in Redis, so workers counting at once lose no failure.
        cache.add(key, 0, timeout=window)
        try:
            count = cache.incr(key)
        except ValueError:  # the window ended between the two: this failure starts the next
            count = 1
            cache.set(key, count, timeout=window)
        if limit in _CLIENT_LIMITS:
            failures = max(failures, count)
    base = settings.BOOKLY_FAILED_CHECK_DELAY_SECONDS
    if base > 0 and failures >= 2:
        delay = min(base * 2 ** (failures - 2), _MAX_DELAY_SECONDS)
        cache.set_many({key: _now() + delay for key in _delay_keys(scope)}, timeout=math.ceil(delay))


def tool_calls_refused(*, count: int) -> None:
    """Count calls of one model response that were not run, being past BOOKLY_MAX_TOOL_CALLS_PER_RESPONSE."""
    IDENTITY_CHECK_LIMITS.labels(limit=CheckLimit.CALLS_PER_RESPONSE).inc(count)
    logger.info("%d tool calls of one model response not run: over the limit per response", count)
