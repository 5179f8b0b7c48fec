"""One-time codes for an order many have guessed at: what a check of it asks for, besides the right email,
once its number has had its failed checks from anyone (support.assistant.budget).

A refusal there would lock the owner out (order numbers are sequential: anyone could keep every order
locked), so the check asks for more instead: a six-digit code emailed to the order's address, which only
its owner reads. A code belongs to the conversation that asked for it (another conversation's wrong tries
cannot void the owner's) and holds for BOOKLY_CHECK_CODE_MINUTES: asking again in that conversation sends
nothing more. It is kept as an HMAC of the project's secret in the cache shared by every worker, read one
per message (the last code-shaped number), used once, and void after _TRIES wrong ones (each also a failed
check of the client who typed it). An order gets at most _EMAILS_PER_WINDOW code emails per
BOOKLY_FAILED_CHECKS_WINDOW_MINUTES, whoever asks: a guesser who knows the email cannot flood the owner's
inbox; past that, the check says a person can help.
"""

import hmac
import re
import secrets
from enum import StrEnum

from django.conf import settings
from django.core.cache import cache
from django.utils.crypto import salted_hmac

from orders.emails import order_check_code_email
from orders.models import Order

CODE_DIGITS = 6
# A code as a customer types it: six digits, perhaps in two groups of three ("482 913", "482-913"); not
# part of a longer number (a phone number, "#104523", an order number, an amount).
CODE_RE = re.compile(r"(?<![\w#-])(?<!\d[., ])(\d{3})[ -]?(\d{3})(?!\w|[.,]\d|[ -]\d)")
_TRIES = 10
_EMAILS_PER_WINDOW = 5
_SALT = "bookly.check-code"


class CodeSent(StrEnum):
    """What asking for a code did."""

    SENT = "sent"  # emailed now, or a code of this conversation still holds
    TOO_MANY = "too_many"  # the order had its code emails for now: a person can help


def _key(order: Order, conversation_id: int) -> str:
    return f"bookly:check-code:{order.pk}:{conversation_id}"


def _digest(order: Order, conversation_id: int, code: str) -> str:
    return salted_hmac(_SALT, f"{order.pk}:{conversation_id}:{code}").hexdigest()


def order_check_code_send(*, order: Order, conversation_id: int) -> CodeSent:
    """Email the order's address a new code for this conversation, unless one of it still holds."""
    key = _key(order, conversation_id)
    if cache.get(key) is not None:
        return CodeSent.SENT
    emails = f"bookly:check-code-emails:{order.pk}"
    cache.add(emails, 0, timeout=settings.BOOKLY_FAILED_CHECKS_WINDOW_MINUTES * 60)
    try:
        sent = cache.incr(emails)
    except ValueError:  # the window ended between the two
        sent = 1
        cache.set(emails, sent, timeout=settings.BOOKLY_FAILED_CHECKS_WINDOW_MINUTES * 60)
    if sent > _EMAILS_PER_WINDOW:
        return CodeSent.TOO_MANY
    code = f"{secrets.randbelow(10**CODE_DIGITS):0{CODE_DIGITS}d}"
    minutes = settings.BOOKLY_CHECK_CODE_MINUTES
    # add(): of two workers asking at once for one conversation, one code is kept and one email sent.
    if cache.add(key, _digest(order, conversation_id, code), timeout=minutes * 60):
        cache.set(f"{key}:tries", 0, timeout=minutes * 60)
        order_check_code_email(order=order, code=code, minutes=minutes)
    return CodeSent.SENT


def order_check_code_passed_keep(*, orders: list[Order], conversation_id: int) -> None:
    """Remember that this conversation typed the code of these orders (all the customer's, in several
    shops): it may check them again without one for a while (asked which shop, say)."""
    cache.set_many(
        {f"{_key(order, conversation_id)}:passed": True for order in orders},
        timeout=settings.BOOKLY_FAILED_CHECKS_WINDOW_MINUTES * 60,
    )


def order_check_code_passed(*, order: Order, conversation_id: int) -> bool:
    """Whether this conversation typed the order's code lately."""
    return bool(cache.get(f"{_key(order, conversation_id)}:passed"))


def code_typed(text: str) -> str | None:
    """The code a message holds: its last code-shaped number, or None."""
    found = CODE_RE.findall(text)
    return "".join(found[-1]) if found else None


def order_check_code_matches(*, order: Order, conversation_id: int, text: str) -> bool:
    """Whether the message holds this conversation's live code for the order; it is then used up. A wrong
    one counts against the code, void after _TRIES of them (a new ask sends a new one)."""
    key = _key(order, conversation_id)
    live, typed = cache.get(key), code_typed(text)
    if live is None or typed is None:
        return False
    if hmac.compare_digest(live, _digest(order, conversation_id, typed)):
        # Used once: of two requests typing it at once, the one whose delete removed it passes.
        used = cache.delete(key)
        cache.delete(f"{key}:tries")
        return bool(used)
    try:
        tries = cache.incr(f"{key}:tries")
    except ValueError:
        tries = _TRIES
    if tries >= _TRIES:
        cache.delete_many([key, f"{key}:tries"])
    return False
