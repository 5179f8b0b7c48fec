"""Claude through the official anthropic SDK: one client per process, our own retries."""

import time
from typing import Any

import anthropic

from support.llm.retries import call_with_retries, pause_before_retry, retry_after_seconds
from support.llm.types import ModelReply

# Error codes in the API's error details that mean "out of money", not "busy":
# retrying cannot help.
SPEND_LIMIT_ERROR_CODES = frozenset(
    {
        "contract_spend_limit_reached",
        "enforced_spend_limit_reached",
        "linked_organization_spend_limit_reached",
        "linked_organization_billing_unavailable",
    }
)


def _plain_blocks(blocks) -> list[dict[str, Any]]:
    """The response's text and tool_use blocks as plain dicts, fit to send back as history."""
    plain = []
    for block in blocks:
        if block.type == "text":
            plain.append({"type": "text", "text": block.text})
        elif block.type == "tool_use":
            plain.append({"type": "tool_use", "id": block.id, "name": block.name, "input": block.input})
    return plain


class AnthropicModel:
    """Claude via the SDK. Retries are ours, so that they respect the turn's deadline and never
    repeat a spend-limit error."""

    offline = False
    provider = "Claude"

    def __init__(
        self, *, api_key: str, model: str, max_tokens: int, timeout: float, max_retries: int, base_url
    ):
        self.name = model
        self.max_tokens = max_tokens
        self.timeout = timeout
        self.max_retries = max_retries
        self.client = anthropic.Anthropic(api_key=api_key, base_url=base_url, max_retries=0, timeout=timeout)

    keeps_state = False

    def create(self, *, system, tools, messages, deadline) -> ModelReply:
        message, started = call_with_retries(
            lambda remaining: self.client.messages.create(
                model=self.name,
                max_tokens=self.max_tokens,
                system=system,
                tools=tools,
                messages=messages,
                timeout=min(self.timeout, remaining),
            ),
            errors=(anthropic.APIStatusError, anthropic.APIConnectionError),
            pause=self._pause_before_retry,
            deadline=deadline,
        )
        return self._reply(message, started=started)

    def _reply(self, message, *, started: float) -> ModelReply:
        return ModelReply(
            content=_plain_blocks(message.content),
            stop_reason=message.stop_reason or "end_turn",
            model=message.model or self.name,
            offline=False,
            request_id=message._request_id or "",
            usage={
                "input_tokens": message.usage.input_tokens or 0,
                "output_tokens": message.usage.output_tokens or 0,
                "cache_read_input_tokens": message.usage.cache_read_input_tokens or 0,
                "cache_creation_input_tokens": message.usage.cache_creation_input_tokens or 0,
            },
            duration_ms=int((time.monotonic() - started) * 1000),
        )

    def _pause_before_retry(self, error: Exception, *, attempt: int, deadline: float) -> float:
        """Seconds to wait before trying again; raises ModelFailed or ModelUnavailable when not to."""
        if isinstance(error, anthropic.APIStatusError):
            status: int | None = error.status_code
            request_id = error.request_id or ""
            asked_wait = retry_after_seconds(error.response.headers)
            out_of_credit = error.error_code in SPEND_LIMIT_ERROR_CODES or error.status_code == 402
        else:  # no answer: a timeout or a connection error
            status, request_id, asked_wait, out_of_credit = None, "", None, False
        return pause_before_retry(
            error=error,
            status=status,
            request_id=request_id,
            asked_wait=asked_wait,
            out_of_credit=out_of_credit,
            attempt=attempt,
            max_retries=self.max_retries,
            deadline=deadline,
        )
