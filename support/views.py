"""The chat's JSON API: one turn per POST. A thin interface over support.services."""

import json
import logging

from django.http import JsonResponse
from django.views.decorators.csrf import ensure_csrf_cookie
from django.views.decorators.http import require_http_methods, require_POST

from support.llm import ModelFailed, ModelUnavailable, get_model
from support.selectors import conversation_transcript
from support.services import (
    InvalidMessage,
    TurnInProgress,
    conversation_end_for_session,
    conversation_get_for_session,
    conversation_take_turn,
    session_ensure,
)

logger = logging.getLogger(__name__)


def _error(status: int, code: str, detail: str, **headers) -> JsonResponse:
    response = JsonResponse({"error": code, "detail": detail, "offline": get_model().offline}, status=status)
    for name, value in headers.items():
        response[name.replace("_", "-")] = value
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

    try:
        payload = json.loads(request.body or b"null")
    except (ValueError, UnicodeDecodeError):
        return _error(400, "invalid_json", 'Send JSON like {"message": "Where is my order?"}.')
    message = payload.get("message") if isinstance(payload, dict) else None
    try:
        result = conversation_take_turn(session=request.session, text=message)
    except InvalidMessage as invalid:
        return _error(400, "invalid_message", invalid.detail)
    except TurnInProgress:
        return _error(
            409, "turn_in_progress", "I'm still answering your previous message. Please wait for that reply."
        )
    except ModelUnavailable as unavailable:
        logger.warning("model unavailable: %s (request_id=%s)", unavailable.reason, unavailable.request_id)
        return _error(
            503,
            "model_unavailable",
            "The assistant is very busy right now. Your message is saved; please try again in a moment.",
            Retry_After=str(unavailable.retry_after),
        )
    except ModelFailed as failed:
        logger.error("model call failed: %s (request_id=%s)", failed.reason, failed.request_id)
        return _error(
            502, "model_error", "The assistant ran into a problem. Your message is saved; please try again."
        )
    except Exception:
        logger.exception("turn failed")
        return _error(
            500,
            "internal_error",
            "Something went wrong on our side. Your message is saved; please try again.",
        )
    return JsonResponse({"reply": result.reply, "offline": result.offline, "turn": result.turn})


@require_POST
def chat_reset(request):
    conversation_end_for_session(session=request.session)
    return JsonResponse({"messages": [], "offline": get_model().offline})
