"""The chat's JSON API: one turn per POST. A thin interface over the assistant's turn."""

import json
import time

from django.http import JsonResponse, StreamingHttpResponse
from django.http.request import RawPostDataException
from django.views.decorators.csrf import ensure_csrf_cookie

from support.assistant.configured import get_model
from support.assistant.not_made import conversation_news_tell
from support.assistant.turn import TurnResult, conversation_take_turn
from support.conversations.feedback import FeedbackRefused
from support.conversations.handoff import conversation_handoff_request
from support.conversations.identity import session_sign_in, session_sign_out
from support.conversations.models import HandoffReason
from support.conversations.not_made import conversation_store_news
from support.conversations.selectors import conversation_reference, conversation_transcript
from support.conversations.services import (
    conversation_end_for_session,
    conversation_get_for_session,
    session_ensure,
)
from support.web.errors import turn_refusal
from support.web.feedback import feedback_give
from support.web.forms import SEND_JSON as SEND_JSON  # bookly.views answers a bad body in these words
from support.web.forms import ChatForm, FeedbackForm, HandoffForm, MessageForm, feedback_form
from support.web.notices import who_answers
from support.web.ratelimits import (
    chat_action_wait_seconds,
    chat_send_wait_seconds,
    client_ip,
    rate_limited_detail,
)
from support.web.stream import turn_events


class _SessionConsistentResponse(JsonResponse):
    # The turn stored what it could; the session must keep its conversation (bookly.middleware saves
    # it even on a 5xx answer that says so).
    session_is_consistent = True


def api_error(status: int, code: str, detail: str, retry_after: int | None = None) -> JsonResponse:
    """Every error of the chat API: {"error": code, "detail": a sentence for a person, "offline"}."""
    response = _SessionConsistentResponse(
        {"error": code, "detail": detail, "offline": get_model().offline}, status=status
    )
    if retry_after:
        response["Retry-After"] = str(retry_after)
    return response


def _rate_limited(wait: int, *, action: bool = False) -> JsonResponse:
    return api_error(429, "rate_limited", rate_limited_detail(wait, action=action), retry_after=wait)


def _method_not_allowed(allowed: list[str]) -> JsonResponse:
    response = api_error(405, "method_not_allowed", f"This address takes {' or '.join(allowed)} only.")
    response["Allow"] = ", ".join(allowed)
    return response


@ensure_csrf_cookie
def chat(request):
    if request.method not in ("GET", "POST"):
        return _method_not_allowed(["GET", "POST"])
    if request.method == "GET":
        # A read makes no session (nor a database row): a visitor gets one with their first message.
        conversation = conversation_get_for_session(session=request.session)
        # The one write a read may make: a change the store did not make, told in the conversation.
        awaiting_store = conversation_news_tell(conversation=conversation)
        return JsonResponse(
            {
                "messages": conversation_transcript(conversation=conversation),
                "conversation": _reference(conversation.pk if conversation else None),
                "offline": get_model().offline,
                "awaiting_store": awaiting_store,
                **who_answers(conversation=conversation),
            }
        )

    if (wait := chat_send_wait_seconds(request)) is not None:
        return _rate_limited(wait)
    form = _form_of_body(request, MessageForm)
    if not form.is_valid():
        return _refused(form)
    message = form.cleaned_data["message"]
    if "text/event-stream" in request.headers.get("Accept", ""):
        return _streamed_turn(request, message)  # a message that cannot be sent was refused above
    try:
        result = conversation_take_turn(
            session=request.session, text=message, client_address=client_ip(request)
        )
    except Exception as error:
        refusal = turn_refusal(error)
        if refusal.session_stale:
            request.session.modified = False
        return api_error(refusal.status, refusal.code, refusal.detail, retry_after=refusal.retry_after)
    request.model_ms = result.model_ms  # for the Server-Timing header, when enabled
    return JsonResponse(_reply_body(result))


def _reply_body(result: TurnResult) -> dict:
    # reply is null when a person answers: the message is kept for them.
    return {
        "reply": result.reply,
        "offline": result.offline,
        "turn": result.turn,
        "status": result.status,
        "votable": result.votable,
        "conversation": _reference(result.conversation_id),
        # News to come from the store (a change it was asked to make): the page asks for it meanwhile.
        "awaiting_store": (
            conversation_store_news(conversation_id=result.conversation_id).pending
            if result.conversation_id
            else False
        ),
    }


_LOST = "Something went wrong on our side. Your message is saved; please try again."


def _streamed_turn(request, message) -> StreamingHttpResponse:
    """The turn as server-sent events: `progress` ({"status": a line for the customer}) as each step
    starts, then `reply` ({"status": the HTTP status the JSON API would give, "body": its body})."""
    session_ensure(session=request.session)  # the cookie goes out with the headers, before the turn

    def answer(outcome: TurnResult | Exception) -> dict:
        if isinstance(outcome, Exception):
            refusal = turn_refusal(outcome)
            body = {"error": refusal.code, "detail": refusal.detail, "offline": get_model().offline}
            if refusal.retry_after:
                body["retry_after"] = refusal.retry_after
            return {"status": refusal.status, "body": body}
        return {"status": 200, "body": _reply_body(outcome)}

    lost = {
        "status": 500,
        "body": {"error": "internal_error", "detail": _LOST, "offline": get_model().offline},
    }
    address = client_ip(request)
    events = turn_events(
        take_turn=lambda progress: conversation_take_turn(
            session=request.session, text=message, progress=progress, client_address=address
        ),
        answer=answer,
        lost=lost,
    )
    response = StreamingHttpResponse(events, content_type="text/event-stream")
    response["Cache-Control"] = "no-cache"
    response["X-Accel-Buffering"] = "no"  # nginx: pass each event on as it comes
    return response


def _reference(conversation_id: int | None) -> str | None:
    """How the page names the conversation it shows (feedback carries it back)."""
    return conversation_reference(conversation_id=conversation_id) if conversation_id else None


_NOT_JSON = object()


def _json_body(request):
    """The request's JSON body (None when empty), or _NOT_JSON."""
    try:
        return json.loads(request.body or b"null")
    except RawPostDataException:
        # A form or multipart body, already read as a form (by the CSRF check): not JSON.
        return _NOT_JSON
    except (ValueError, UnicodeDecodeError, RecursionError):
        return _NOT_JSON


def _form_of_body(request, form_class: type[ChatForm], read=None) -> ChatForm:
    """The form bound to the request's JSON body (by `read` when the body decides which form: feedback
    is a vote or a rating); for a body that is not JSON, one that says so with its shape by example."""
    payload = _json_body(request)
    if payload is _NOT_JSON:
        return form_class.not_json()
    return (read or form_class.from_json)(payload)


def _refused(form: ChatForm) -> JsonResponse:
    mistake = form.first_mistake()
    return api_error(400, mistake.code, mistake.detail)


def chat_handoff(request):
    """The customer asks for a person: optional {"reason": text, "email": an address to answer at}."""
    if request.method != "POST":
        return _method_not_allowed(["POST"])
    if (wait := chat_send_wait_seconds(request)) is not None:
        return _rate_limited(wait)
    form = _form_of_body(request, HandoffForm)
    if not form.is_valid():
        return _refused(form)
    try:
        conversation, already = conversation_handoff_request(
            session=request.session,
            conversation=conversation_get_for_session(session=request.session),
            reason=HandoffReason.CUSTOMER_BUTTON,
            note=form.cleaned_data["reason"],
            email=form.cleaned_data["email"],
        )
    except Exception as error:
        refusal = turn_refusal(error)
        return api_error(refusal.status, refusal.code, refusal.detail, retry_after=refusal.retry_after)
    return JsonResponse(
        {"already": already, "offline": get_model().offline, **who_answers(conversation=conversation)}
    )


def chat_feedback(request):
    """The customer's vote on a reply, {"turn": N, "helpful": true|false}, or their rating of the
    conversation, {"rating": 1-5, "comment": text}."""
    if request.method != "POST":
        return _method_not_allowed(["POST"])
    if (wait := chat_action_wait_seconds(request)) is not None:
        return _rate_limited(wait, action=True)
    form = _form_of_body(request, FeedbackForm, read=lambda payload: feedback_form(payload, typed=True))
    if not form.is_valid():
        return _refused(form)
    try:
        given = feedback_give(session=request.session, feedback=form.cleaned_data)
    except FeedbackRefused as refused:
        return api_error(400, refused.code, refused.message)
    return JsonResponse(given)


SIGN_IN_JSON = 'Send JSON like {"email": "...", "time": 1764115200, "signature": "64 hex characters"}.'


def chat_sign_in(request):
    """The store's word for who its signed-in customer is: {"email", "time", "signature"} (README,
    "Signed-in customers"). Answers {"signed_in": true|false, "conversation_ended": true|false} either
    way: the page learns nothing about why a signature was not taken (the server's log says), only
    whether the conversation it shows ended (another customer's, or one signed out)."""
    if request.method != "POST":
        return _method_not_allowed(["POST"])
    if (wait := chat_action_wait_seconds(request)) is not None:
        return _rate_limited(wait, action=True)
    payload = _json_body(request)
    if not isinstance(payload, dict):
        return api_error(400, "invalid_json", SIGN_IN_JSON)
    sign_in = session_sign_in(
        session=request.session,
        email=payload.get("email"),
        timestamp=payload.get("time"),
        signature=payload.get("signature"),
        now=time.time(),
    )
    return JsonResponse(
        {"signed_in": sign_in.refusal is None, "conversation_ended": sign_in.conversation_ended}
    )


def chat_sign_out(request):
    """The store's page has nobody signed in (a customer signed out of the store, or another one uses
    the computer): the chat forgets whom the store had signed in and ends their conversation."""
    if request.method != "POST":
        return _method_not_allowed(["POST"])
    if (wait := chat_action_wait_seconds(request)) is not None:
        return _rate_limited(wait, action=True)
    ended = session_sign_out(session=request.session)
    return JsonResponse({"signed_in": False, "conversation_ended": ended})


def chat_reset(request):
    if request.method != "POST":
        return _method_not_allowed(["POST"])
    if (wait := chat_action_wait_seconds(request)) is not None:
        return _rate_limited(wait, action=True)
    conversation_end_for_session(session=request.session)
    return JsonResponse({"messages": [], "offline": get_model().offline, **who_answers(conversation=None)})
