"""The chat's JSON API: one turn per POST. A thin interface over the assistant's turn."""

import json

from django.http import JsonResponse
from django.views.decorators.csrf import ensure_csrf_cookie
from django.views.decorators.http import require_http_methods, require_POST

from support.assistant.turn import conversation_take_turn
from support.conversations.selectors import conversation_transcript
from support.conversations.services import (
    conversation_end_for_session,
    conversation_get_for_session,
    session_ensure,
)
from support.llm.configured import get_model
from support.web.errors import turn_refusal
from support.web.ratelimits import chat_send_wait_seconds, rate_limited_detail


def _error(status: int, code: str, detail: str, retry_after: int | None = None) -> JsonResponse:
    response = JsonResponse({"error": code, "detail": detail, "offline": get_model().offline}, status=status)
    if retry_after:
        response["Retry-After"] = str(retry_after)
    # The turn stored what it could; the session must keep its conversation.
    response.session_is_consistent = True
    return response


@ensure_csrf_cookie
@require_http_methods(["GET", "POST"])
def chat(request):
    if request.method == "GET":
        session_ensure(session=request.session)
        conversation = conversation_get_for_session(session=request.session)
        return JsonResponse(
            {"messages": conversation_transcript(conversation=conversation), "offline": get_model().offline}
        )

    wait = chat_send_wait_seconds(request)
    if wait is not None:
        return _error(429, "rate_limited", rate_limited_detail(wait), retry_after=wait)
    try:
        payload = json.loads(request.body or b"null")
    except (ValueError, UnicodeDecodeError):
        return _error(400, "invalid_json", 'Send JSON like {"message": "Where is my order?"}.')
    message = payload.get("message") if isinstance(payload, dict) else None
    try:
        result = conversation_take_turn(session=request.session, text=message)
    except Exception as error:
        refusal = turn_refusal(error)
        return _error(refusal.status, refusal.code, refusal.detail, retry_after=refusal.retry_after)
    request.model_ms = result.model_ms  # for the Server-Timing header, when enabled
    return JsonResponse({"reply": result.reply, "offline": result.offline, "turn": result.turn})


@require_POST
def chat_reset(request):
    conversation_end_for_session(session=request.session)
    return JsonResponse({"messages": [], "offline": get_model().offline})
