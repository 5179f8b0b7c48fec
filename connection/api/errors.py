"""Every error of the store API in one shape: {"error": {"code", "message"}}, with "fields" (the problems
by field) for an order refused, and never the sender's own text."""

import logging
from typing import Any

from django.core.exceptions import RequestDataTooBig
from rest_framework import exceptions
from rest_framework.response import Response
from rest_framework.views import exception_handler

from connection.api.auth import KEY_NOT_VALID, KeyRefused
from orders.outbound import ErrorOut, shape_dump

logger = logging.getLogger(__name__)

# DRF's codes, as the shop reads them.
_CODES = {
    exceptions.ParseError: ("invalid_json", "The body is not valid JSON."),
    exceptions.UnsupportedMediaType: ("unsupported_media_type", "Send the body as application/json."),
    exceptions.NotAuthenticated: (
        "not_authenticated",
        "Send your store API key as Authorization: Bearer <key>.",
    ),
    exceptions.AuthenticationFailed: ("invalid_key", KEY_NOT_VALID),
    exceptions.NotFound: ("not_found", "There is nothing here by that name."),
    exceptions.MethodNotAllowed: ("method_not_allowed", "This address does not take that method."),
    exceptions.NotAcceptable: ("not_acceptable", "The store API answers in application/json only."),
}


def api_error(code: str, message: str, http_status: int, **extra: object) -> Response:
    """An error in the one shape the schema gives (orders.outbound.ErrorOut); fields not given are left
    out."""
    body = shape_dump(ErrorOut, error={"code": code, "message": message, **extra})
    detail = body["error"]
    assert isinstance(detail, dict)  # ErrorOut's, as JSON
    body["error"] = {name: value for name, value in detail.items() if value is not None}
    return Response(body, status=http_status)


def api_exception_handler(error: Exception, context: dict[str, Any]) -> Response:
    if isinstance(error, RequestDataTooBig):
        return api_error("body_too_large", "The body is too large for one order.", 413)
    if isinstance(error, RecursionError):  # JSON nested deeper than the parser goes
        return api_error("invalid_json", "The body is not valid JSON.", 400)
    response = exception_handler(error, context)
    if response is None:
        logger.exception("store API request failed", exc_info=error)
        return api_error("server_error", "Something went wrong on our side; nothing was changed.", 500)
    if isinstance(error, exceptions.Throttled):
        # DRF's response keeps its Retry-After header; only the body is ours.
        # DRF sets `wait`, which its stubs leave out.
        waited = error.wait  # type: ignore[attr-defined]
        wait = f" Try again in {waited:.0f} seconds." if waited else ""
        what = (
            "wrong API keys from this address"
            if error.default_code == "key_attempts_throttled"
            else ("requests for this key")
        )
        response.data = {"error": {"code": "rate_limited", "message": f"Too many {what}.{wait}"}}
        return response
    if isinstance(error, exceptions.NotFound) and "cursor" in str(error.detail).casefold():
        response.data = {"error": {"code": "invalid_parameter", "message": "That cursor is not one we gave."}}
        response.status_code = 400
        return response
    if isinstance(error, KeyRefused):
        response.data = {"error": {"code": "invalid_key", "message": error.message}}
        return response
    for kind, (code, message) in _CODES.items():
        if isinstance(error, kind):
            response.data = {"error": {"code": code, "message": message}}
            return response
    response.data = {
        "error": {"code": getattr(error, "default_code", "error"), "message": "The request failed."}
    }
    return response
