"""One-time codes for an order many have guessed at: what a check of it asks for, besides the right email,
once its number has had its failed checks from anyone (support.assistant.budget).

A refusal there would lock the owner out (order numbers are sequential: anyone could keep every order
locked), so the check asks for more instead: a six-digit code emailed to the order's address, which only
its owner reads. One code per order holds for BOOKLY_CHECK_CODE_MINUTES, whoever asked for it (more asks
send nothing more: a guesser who knows the email cannot flood the owner's inbox); it is kept as an HMAC
of the project's secret, shared by every worker through the cache, used once, and void after
_TRIES wrong ones (each also a failed check of the client who typed it).
"""

import hmac
import re
import secrets

from django.conf import settings
from django.core.cache import cache
from django.utils.crypto import salted_hmac

from orders.emails import order_check_code_email
from orders.models import Order

CODE_DIGITS = 6
# A code as a customer types it: six digits, perhaps in two groups of three ("482 913").
CODE_RE = re.compile(r"(?<![\d.,-])(\d{3})[ -]?(\d{3})(?![\d.,-])")
_TRIES = 10
_SALT = "bookly.check-code"


def _key(order: Order) -> str:
    return f"bookly:check-code:{order.pk}"


def _digest(order: Order, code: str) -> str:
    return salted_hmac(_SALT, f"{order.pk}:{code}").hexdigest()


def order_check_code_send(*, order: Order) -> None:
    """Email the order's address a new code, unless one sent within BOOKLY_CHECK_CODE_MINUTES holds."""
    code = f"{secrets.randbelow(10**CODE_DIGITS):0{CODE_DIGITS}d}"
    minutes = settings.BOOKLY_CHECK_CODE_MINUTES
    # add(): of two workers asking at once, one code is kept and one email sent.
    if cache.add(_key(order), _digest(order, code), timeout=minutes * 60):
        cache.set(f"{_key(order)}:tries", 0, timeout=minutes * 60)
        order_check_code_email(order=order, code=code, minutes=minutes)


def order_check_code_typed(*, text: str) -> bool:
    """Whether the text holds something shaped as a code."""
    return CODE_RE.search(text) is not None


def order_check_code_matches(*, order: Order, text: str) -> bool:
    """Whether the text holds the order's live code; it is then used up. A wrong one counts against the
    code, void after _TRIES of them (a new check sends a new one)."""
    live = cache.get(_key(order))
    typed = ["".join(groups) for groups in CODE_RE.findall(text)]
    if live is None or not typed:
        return False
    if any(hmac.compare_digest(live, _digest(order, code)) for code in typed):
        # Used once: of two conversations typing it at once, the one whose delete removed it passes.
        used = cache.delete(_key(order))
        cache.delete(f"{_key(order)}:tries")
        return bool(used)
    try:
        tries = cache.incr(f"{_key(order)}:tries")
    except ValueError:
        tries = _TRIES
    if tries >= _TRIES:
        cache.delete_many([_key(order), f"{_key(order)}:tries"])
    return False
