"""The customer chat page. It works without JavaScript (form POST, then redirect back);
static/support/chat.js enhances the same form over the JSON API in support/web/api.py."""

import logging
import re
from pathlib import Path

from django.conf import settings
from django.contrib import messages
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString
from django.views.decorators.csrf import ensure_csrf_cookie
from django.views.decorators.http import require_POST, require_safe

from orders.numbers import ORDER_NUMBERS, per_numbering
from orders.patterns import ISO_DATE_MENTION_RE, RMA_NUMBER_PATTERN
from support.assistant.configured import get_model
from support.assistant.not_made import conversation_news_tell
from support.assistant.turn import conversation_take_turn
from support.conversations.feedback import RATING_COMMENT_MAX_CHARS, FeedbackRefused
from support.conversations.handoff import conversation_handoff_request
from support.conversations.models import ConversationStatus, HandoffReason
from support.conversations.selectors import (
    SIGNED_IN_SESSION_KEY,
    conversation_reference,
    conversation_transcript,
)
from support.conversations.services import conversation_end_for_session, conversation_get_for_session
from support.web.errors import turn_refusal
from support.web.feedback import feedback_give
from support.web.forms import ComposerForm, HandoffForm, RatingForm, feedback_form
from support.web.notices import who_answers
from support.web.ratelimits import (
    chat_action_wait_seconds,
    chat_send_wait_seconds,
    client_ip,
    rate_limited_detail,
)

logger = logging.getLogger(__name__)

SUGGESTIONS = (
    "Where is my order?",
    "I want to return a book",
    "How long does shipping take?",
    "How do returns work?",
)

# The customer's unsent words, kept in their session across the redirect after an error.
DRAFT_SESSION_KEY = "chat_draft"


def _draft_keep(request, text: str) -> None:
    """Keep the unsent words for the page's next view, unless the store signed its customer out (or
    another in) while the turn ran: they were the earlier customer's words, not for whoever is at the
    browser now. (The session middleware keeps such a sign-out from being undone.)"""
    session = request.session
    if session.session_key:
        stored = type(session)(session_key=session.session_key).load()
        if stored.get(SIGNED_IN_SESSION_KEY) != session.get(SIGNED_IN_SESSION_KEY):
            return
    # Bounded: the session is no place for megabytes a client chose to post.
    session[DRAFT_SESSION_KEY] = text[: settings.BOOKLY_MAX_MESSAGE_CHARS * 4]


RATING_SCALE = ((1, "1 (poor)"), (2, "2"), (3, "3"), (4, "4"), (5, "5 (excellent)"))


def _rating(conversation, transcript: list[dict]) -> dict:
    """The rating form: offered once someone has answered, opened when staff closed the conversation or
    handed it back to the assistant."""
    return {
        "can_rate": any(entry["role"] != "customer" for entry in transcript),
        "invite": conversation is not None
        and (
            conversation.status == ConversationStatus.CLOSED
            or (conversation.status == ConversationStatus.ASSISTANT and conversation.handoff_at is not None)
        ),
        "given": conversation.rating if conversation else None,
        "comment": conversation.rating_comment if conversation else "",
        "scale": RATING_SCALE,
        "comment_max": RATING_COMMENT_MAX_CHARS,
    }


# What must not break across lines in a message: dates and the store's codes ("2026-03-30", "BK-10042",
# "RMA-7KQ2XW9P" read wrongly when split at their hyphen). chat.js reads the same pattern from the page.
_NOBREAK_RE = per_numbering(
    lambda numbering: re.compile(
        "|".join([ISO_DATE_MENTION_RE.pattern, numbering.exact.pattern, RMA_NUMBER_PATTERN.strip("^$")])
    )
)


def message_html(*, text: str) -> SafeString:
    """A message as text (escaped), with its dates and codes kept on one line."""
    return format_html_join(
        "",
        "{}{}",
        (
            (part, format_html('<span class="nobreak">{}</span>', code) if code else "")
            for part, code in _split_codes(text)
        ),
    )


def _split_codes(text: str):
    """(text before, code) pairs covering `text`; the last code is ""."""
    start = 0
    for match in _NOBREAK_RE().finditer(text):
        yield text[start : match.start()], match.group()
        start = match.end()
    yield text[start:], ""


def _chat_page(request, *, draft: str = "", status: int = 200, embed: bool = False):
    conversation = conversation_get_for_session(session=request.session)
    awaiting_store = conversation_news_tell(conversation=conversation)  # as GET /api/chat does
    transcript = conversation_transcript(conversation=conversation)
    for entry in transcript:
        entry["html"] = message_html(text=entry["text"])
    context = {
        "transcript": transcript,
        "time_zone": settings.TIME_ZONE,
        "nobreak_pattern": _NOBREAK_RE().pattern,
        "order_number_starts": ORDER_NUMBERS.starts_with(" (it starts with {prefix})", ""),
        "conversation_ref": conversation_reference(conversation_id=conversation.pk) if conversation else "",
        "rating": _rating(conversation, transcript),
        "who": who_answers(conversation=conversation),
        "awaiting_store": awaiting_store,
        "offline": get_model().offline,
        "draft": draft,
        "suggestions": SUGGESTIONS,
        # The browser waits a little longer than the server lets a turn run.
        "reply_timeout_ms": int((settings.BOOKLY_TURN_DEADLINE_SECONDS + 10) * 1000),
        "embed": embed,
        "widget_origins": settings.BOOKLY_WIDGET_ORIGINS if embed else [],
    }
    return render(request, "support/chat.html", context, status=status)


@ensure_csrf_cookie
@require_safe
def chat_page(request):
    embed = request.GET.get("embed") == "1"
    response = _chat_page(request, draft=request.session.pop(DRAFT_SESSION_KEY, ""), embed=embed)
    if embed and settings.BOOKLY_WIDGET_ORIGINS:
        # The widget's frame: the store's listed origins may show it, and nothing else (the CSP's
        # frame-ancestors; X-Frame-Options cannot name origins, so it is left off this one page).
        response._csp_replace = {"frame-ancestors": settings.BOOKLY_WIDGET_ORIGINS}
        response.xframe_options_exempt = True
    return response


_WIDGET_SCRIPT = Path(__file__).resolve().parents[2] / "static" / "support" / "widget.js"


@require_safe
def widget_script(request):
    """The one script a store puts on its pages (README, "On your website"), at a stable address."""
    response = HttpResponse(_WIDGET_SCRIPT.read_bytes(), content_type="text/javascript; charset=utf-8")
    response["Cache-Control"] = "public, max-age=300"
    response["Cross-Origin-Resource-Policy"] = "cross-origin"  # loaded by the store's pages
    return response


@require_POST
def chat_send(request):
    """One turn from the page's form: answer, then redirect back to the page (post/redirect/get)."""
    form = ComposerForm(request.POST)
    if (wait := chat_send_wait_seconds(request)) is not None:
        return _rate_limited_page(request, wait, draft=form.unsent)
    if not form.is_valid():
        return _not_sent(request, form.first_mistake().detail, status=400, draft=form.unsent)
    try:
        conversation_take_turn(
            session=request.session, text=form.cleaned_data["message"], client_address=client_ip(request)
        )
    except Exception as error:
        refusal = turn_refusal(error)
        if refusal.session_stale:
            # Answered with the page itself, not a redirect: the words (the signed-out customer's) and
            # the request's stale session, which would sign them back in, are not kept.
            messages.error(request, refusal.detail)
            response = _chat_page(request, status=refusal.status)
            request.session.modified = False
            return response
        return _not_sent(request, refusal.detail, status=refusal.status, draft=form.unsent)
    if form.suggestion and form.typed_text.strip():
        _draft_keep(request, form.typed_text)  # a suggested question was sent: what was typed stays
    return redirect(reverse("support:chat") + "#latest")


def _not_sent(request, detail: str, *, status: int, draft: str):
    """The message was not sent: say why, and give the words back in the box."""
    messages.error(request, detail)
    if not request.session.session_key:
        # A visitor whose first message was refused gets no session just to carry their words
        # across a redirect: the answer is the page, with the words back in the box.
        return _chat_page(request, draft=draft, status=status)
    _draft_keep(request, draft)
    return redirect(reverse("support:chat") + "#latest")


def _rate_limited_page(request, wait: int, *, draft: str = "", action: bool = False):
    # Rendered, not redirected: the answer itself must be the 429.
    messages.error(request, rate_limited_detail(wait, action=action))
    response = _chat_page(request, draft=draft, status=429)
    response["Retry-After"] = str(wait)
    return response


@require_POST
def chat_page_reset(request):
    if (wait := chat_action_wait_seconds(request)) is not None:
        return _rate_limited_page(request, wait, action=True)
    conversation_end_for_session(session=request.session)
    request.session.pop(DRAFT_SESSION_KEY, None)
    messages.success(request, "You started a new conversation.")
    return redirect("support:chat")


@require_POST
def chat_handoff(request):
    """The page's "Talk to a person" form (and, while waiting, the email address to answer at)."""
    form = HandoffForm(request.POST)
    if (wait := chat_send_wait_seconds(request)) is not None:
        return _rate_limited_page(request, wait)
    if not form.is_valid():
        messages.error(request, form.first_mistake().detail)
        return redirect(reverse("support:chat") + "#handoff")
    email = form.cleaned_data["email"]
    try:
        conversation_handoff_request(
            session=request.session,
            conversation=conversation_get_for_session(session=request.session),
            reason=HandoffReason.CUSTOMER_BUTTON,
            note=form.cleaned_data["reason"],
            email=email,
        )
    except Exception as error:
        messages.error(request, turn_refusal(error).detail)
    else:
        if email:
            messages.success(request, f"Thank you. We'll also answer you at {email}.")
    return redirect(reverse("support:chat") + "#handoff")


@require_POST
def chat_feedback(request):
    """The page's feedback forms: a vote on a reply (turn, helpful=yes|no), or a rating of the
    conversation (rating 1-5, comment)."""
    if (wait := chat_action_wait_seconds(request)) is not None:
        return _rate_limited_page(request, wait, action=True)
    form = feedback_form(request.POST)
    valid = form.is_valid()
    if isinstance(form, RatingForm):
        anchor = "#rating"
    else:
        turn = form.cleaned_data.get("turn")
        anchor = f"#reply-{turn}" if turn else ""
    if not valid:
        messages.error(request, form.first_mistake().detail)
        return redirect(reverse("support:chat") + anchor)
    try:
        given = feedback_give(session=request.session, feedback=form.cleaned_data)
    except FeedbackRefused as refused:
        messages.error(request, refused.message)
    else:
        messages.success(
            request, "Thank you for rating this conversation." if "rating" in given else "Thank you."
        )
    return redirect(reverse("support:chat") + anchor)
