"""Customers the store signed in: its backend vouches for a customer's email with an HMAC-SHA256
signature, and the chat then knows their email without asking.

The store computes, with BOOKLY_CUSTOMER_SIGNING_SECRET,

    signature = hex(HMAC-SHA256(secret, email + "\\n" + str(unix_time)))

and the page passes email, time and signature (README, "Signed-in customers"). A signature counts
only when it is right (compared in constant time), fresh (at most BOOKLY_CUSTOMER_SIGNATURE_MAX_AGE_SECONDS
old, and not from the future beyond a minute of clock skew) and not used by another session
before: one copied out of a page into another browser is a replay. Anything else leaves the
customer anonymous, as before, and is logged without the email. The signed-in email is kept in the
customer's session (never shared between sessions) and on their open conversation, for staff.
"""

import hashlib
import hmac
import logging
import re
from dataclasses import dataclass
from enum import StrEnum

from django.conf import settings
from django.core.cache import cache
from django.core.exceptions import ValidationError
from django.core.validators import validate_email
from django.db import transaction
from django.utils import timezone

from store.text import text_has_unseen
from support.conversations.models import Conversation, ConversationEnd
from support.conversations.selectors import (
    SIGNED_IN_SESSION_KEY,
    session_signed_in_email,
    signing_secret_fingerprint,
)
from support.conversations.services import session_ensure, session_handle

logger = logging.getLogger(__name__)

# A store's clock may run a little ahead of ours.
CLOCK_SKEW_SECONDS = 60
MAX_EMAIL_LENGTH = 254
_SIGNATURE_RE = re.compile(r"[0-9a-fA-F]{64}")
# What a plain address never holds, though an address may (quoted local parts): the email goes into
# the model's reminder, where < > could close a tag.
_UNPLAIN_EMAIL_RE = re.compile(r'[\s"<>()\[\]\\,;:]')


class SignInRefusal(StrEnum):
    NOT_CONFIGURED = "not_configured"
    MALFORMED = "malformed"
    WRONG_SIGNATURE = "wrong_signature"
    EXPIRED = "expired"
    REPLAYED = "replayed"


def customer_signature(*, secret: str, email: str, timestamp: int) -> str:
    """The signature a store computes for a signed-in customer (README has it in Python and Node)."""
    message = f"{email}\n{timestamp}".encode()
    return hmac.new(secret.encode(), message, hashlib.sha256).hexdigest()


def customer_signature_check(*, email, timestamp, signature, now: float) -> SignInRefusal | None:
    """Why this signature does not sign the customer in, or None when it does (replays aside: that
    needs the session, see session_sign_in). `now` is the current Unix time."""
    secret = settings.BOOKLY_CUSTOMER_SIGNING_SECRET
    if not secret:
        return SignInRefusal.NOT_CONFIGURED
    if not (
        isinstance(email, str)
        and isinstance(signature, str)
        and isinstance(timestamp, int)
        and not isinstance(timestamp, bool)
        and len(email) <= MAX_EMAIL_LENGTH
        and _SIGNATURE_RE.fullmatch(signature)
        and not _UNPLAIN_EMAIL_RE.search(email)
        # A bidi override or invisible character shows staff another address (bob@exa\u202emple.com),
        # however rightly signed: refused as an email a customer types is (invalid_email).
        and not text_has_unseen(email)
    ):
        return SignInRefusal.MALFORMED
    try:
        validate_email(email)
    except ValidationError:
        return SignInRefusal.MALFORMED
    expected = customer_signature(secret=secret, email=email, timestamp=timestamp)
    if not hmac.compare_digest(expected, signature.lower()):
        return SignInRefusal.WRONG_SIGNATURE
    if not now - settings.BOOKLY_CUSTOMER_SIGNATURE_MAX_AGE_SECONDS <= timestamp <= now + CLOCK_SKEW_SECONDS:
        return SignInRefusal.EXPIRED
    return None


@dataclass(frozen=True)
class SignIn:
    """What a sign-in (or sign-out) did: why the signature was refused (None when it signed the
    customer in), and whether it ended the open conversation (the page then shows a fresh one)."""

    refusal: SignInRefusal | None
    conversation_ended: bool = False


def session_sign_in(*, session, email, timestamp, signature, now: float) -> SignIn:
    """Sign the session's customer in with a store's signature, or say why not (and log it, and sign
    out whoever was signed in: the page could not vouch for its customer).

    A signature is claimed for one session in the cache (an atomic add, shared by every worker with
    Redis) for as long as it could be fresh: the same session may present it again (the page loaded
    twice in one second), any other session is refused. A new identity gets a new session key, as
    Django's login does, so that a key planted in the browser before cannot ride on it. An anonymous
    visitor's open conversation follows the key (they signed in to the store mid-chat); another
    signed-in customer's ends, with everything it verified, since the person at the browser is someone
    else now. The email is kept in the session, with the secret that signed it, and on the
    conversation for staff."""
    refusal = customer_signature_check(email=email, timestamp=timestamp, signature=signature, now=now)
    claim = f"bookly:signed-in:{hashlib.sha256(str(signature).lower().encode()).hexdigest()}"
    lifetime = settings.BOOKLY_CUSTOMER_SIGNATURE_MAX_AGE_SECONDS + 2 * CLOCK_SKEW_SECONDS
    if refusal is None:
        session_ensure(session=session)
        handle = session_handle(session_key=session.session_key)
        if not cache.add(claim, handle, timeout=lifetime) and cache.get(claim) != handle:
            refusal = SignInRefusal.REPLAYED
    if refusal is not None:
        logger.warning("a customer sign-in was refused: %s", refusal.value)
        return SignIn(refusal, conversation_ended=session_sign_out(session=session))
    email = email.strip()
    ended = False
    if session_signed_in_email(session=session) != email:
        with transaction.atomic():
            open_conversation = Conversation.objects.filter(session_handle=handle, ended_at__isnull=True)
            # Another signed-in customer's (the session may have lost the sign-in to a changed secret,
            # the conversation remembers it): not this customer's.
            ended = bool(
                open_conversation.exclude(signed_in_email="")
                .exclude(signed_in_email=email)
                .update(ended_at=timezone.now(), end_reason=ConversationEnd.CUSTOMER_CHANGED)
            )
            session.cycle_key()
            new_handle = session_handle(session_key=session.session_key)
            open_conversation.update(session_handle=new_handle)
        cache.set(claim, new_handle, timeout=lifetime)
        handle = new_handle
    session[SIGNED_IN_SESSION_KEY] = {"email": email, "secret": signing_secret_fingerprint()}
    with transaction.atomic():
        open_conversation = Conversation.objects.filter(session_handle=handle, ended_at__isnull=True)
        open_conversation.update(signed_in_email=email)
        open_conversation.filter(customer_email="").update(customer_email=email)
    return SignIn(None, conversation_ended=ended)


def session_sign_out(*, session) -> bool:
    """Forget whom the store had signed in, and end the conversation they had open (with what it
    verified): the next person at this browser starts as nobody, and never sees it. Staff still see on
    it who was signed in, and when the sign-out ended it. Whether it ended one.

    A sign-out for a visitor nobody signed in (every page of the store without a signed-in customer
    says so) leaves their conversation be."""
    session.pop(SIGNED_IN_SESSION_KEY, None)
    if not session.session_key:
        return False
    return bool(
        Conversation.objects.filter(
            session_handle=session_handle(session_key=session.session_key), ended_at__isnull=True
        )
        .exclude(signed_in_email="")
        .update(ended_at=timezone.now(), end_reason=ConversationEnd.SIGNED_OUT)
    )
