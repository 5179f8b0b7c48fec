"""Any model behind the OpenAI Chat Completions API (OpenAI, Azure OpenAI, Ollama, vLLM, LM Studio,
llama.cpp's server), through the official openai SDK, speaking Bookly's side of the boundary: the
Messages API's shapes (support.llm.types). Everything behind the boundary (the tool loop, the four
guard layers, traces, metrics, costs) runs unchanged whichever provider answered.

The mapping, both ways:
  system blocks          → one system message, first (providers that cache prefixes cache it)
  tools (input_schema)   → functions (parameters)
  assistant tool_use     ↔ tool_calls (the same ids), arguments as JSON text
  user tool_result       → one `tool` message each, before the user's own words (text parts, or one
                           string with OPENAI_CONTENT_FORMAT=string, for templates that take no arrays)
  finish_reason          → stop_reason: stop → end_turn, tool_calls → tool_use, length → max_tokens,
                           content_filter → refusal
  message.refusal        → stop_reason refusal (nothing of it is shown)
  usage                  → input, output and cache-read tokens (cached prompt tokens)
A reasoning model's thinking is never part of the reply: a field of its own (reasoning_content,
reasoning) is not read, and a <think>…</think> block that some servers leave at the start of the
content (Qwen3 or DeepSeek-R1 on llama.cpp or vLLM without a reasoning parser) is removed; thinking
that was cut off before it ended leaves no reply.
Arguments that are not a JSON object reach the tools as they came, which refuse them by field
("must be a JSON object"), as they refuse any other malformed call; they go back to the provider as {}.
"""

import copy
import html
import json
import re
import time
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import urlsplit

import openai
from openai.types.chat import (
    ChatCompletionAssistantMessageParam,
    ChatCompletionContentPartTextParam,
    ChatCompletionFunctionToolParam,
    ChatCompletionMessageFunctionToolCallParam,
    ChatCompletionMessageParam,
)

from support.llm.protocol import CONTENT_PARTS_RE, content_parts_in
from support.llm.retries import call_with_retries, pause_before_retry, retry_after_seconds
from support.llm.types import ContentFormat, ModelFailed, ModelReply

_OPENAI_HOST = "api.openai.com"
_STOP_REASONS = {
    "stop": "end_turn",
    "tool_calls": "tool_use",
    "length": "max_tokens",
    "content_filter": "refusal",
}


def chat_messages(
    *, system: list[dict], messages: list[dict], content_format: ContentFormat = ContentFormat.PARTS
) -> list[ChatCompletionMessageParam]:
    """Bookly's system blocks and Messages-API history as Chat Completions messages; with
    ContentFormat.STRING, every message's content is one string (an assistant's too, "" beside its
    tool calls: some templates print a null content as "None")."""
    as_string = content_format == ContentFormat.STRING
    converted: list[ChatCompletionMessageParam] = [
        {
            "role": "system",
            "content": "\n\n".join(block["text"] for block in system if block.get("type") == "text"),
        }
    ]
    for entry in messages:
        blocks = entry["content"]
        if isinstance(blocks, str):
            blocks = [{"type": "text", "text": blocks}]
        texts = [block["text"] for block in blocks if block["type"] == "text"]
        words = "\n\n".join(texts)
        if entry["role"] == "assistant":
            calls: list[ChatCompletionMessageFunctionToolCallParam] = [
                {
                    "id": block["id"],
                    "type": "function",
                    "function": {
                        "name": block["name"],
                        "arguments": _arguments_text(block["input"]),
                    },
                }
                for block in blocks
                if block["type"] == "tool_use"
            ]
            assistant: ChatCompletionAssistantMessageParam = {
                "role": "assistant",
                "content": words if as_string else words or None,
            }
            if calls:
                assistant["tool_calls"] = calls
            converted.append(assistant)
            continue
        for block in blocks:
            if block["type"] == "tool_result":
                converted.append(
                    {"role": "tool", "tool_call_id": block["tool_use_id"], "content": _result_text(block)}
                )
        if texts:
            # Parts, not one string: the turn's reminder stays a block of its own, as with Claude. As one
            # string the reminder still opens with its tag, on a paragraph of its own.
            parts: list[ChatCompletionContentPartTextParam] = [
                {"type": "text", "text": text} for text in texts
            ]
            one_string = as_string or len(texts) == 1
            converted.append({"role": "user", "content": words if one_string else parts})
    return converted


def _arguments_text(arguments) -> str:
    """A call's arguments as sent back: a JSON object always. Servers such as llama.cpp's parse them
    and refuse the whole request otherwise, so a call whose arguments were not an object goes back
    as {}; its tool result already told the model what was wrong."""
    return json.dumps(arguments if isinstance(arguments, dict) else {}, ensure_ascii=False)


def _result_text(block: dict) -> str:
    content = block.get("content", "")
    if isinstance(content, list):
        content = "\n".join(part.get("text", "") for part in content if part.get("type") == "text")
    return content


def chat_tools(tools: list[dict]) -> list[ChatCompletionFunctionToolParam]:
    return [
        {
            "type": "function",
            "function": {
                "name": tool["name"],
                "description": tool["description"],
                "parameters": tool["input_schema"],
            },
        }
        for tool in tools
    ]


_THINKING_END = "</think>"


def _without_thinking(content: str) -> str:
    """The content without what a reasoning model thought before it answered, when the server leaves
    it there: up to the first </think> (the <think> may be in the prompt's template, not the output),
    or all of it when the thinking was cut off before it ended."""
    end = content.find(_THINKING_END)
    if end != -1:
        return content[end + len(_THINKING_END) :].lstrip()
    return "" if content.lstrip().startswith("<think>") else content


def reply_content(message) -> list[dict[str, Any]]:
    """The answer's text and tool calls as Messages-API blocks."""
    content: list[dict[str, Any]] = []
    words = _without_thinking(message.content or "")
    if words:
        content.append({"type": "text", "text": words})
    for call in message.tool_calls or []:
        arguments = call.function.arguments or ""
        try:
            parsed = json.loads(arguments) if arguments.strip() else {}
        except json.JSONDecodeError:
            parsed = arguments
        content.append({"type": "tool_use", "id": call.id, "name": call.function.name, "input": parsed})
    return content


class ChatCompletionsModel:
    """A Chat Completions provider via the openai SDK. Retries are ours, as for Claude: within the
    turn's deadline, never for what a retry cannot fix."""

    offline = False
    provider = "OpenAI-compatible"

    def __init__(
        self,
        *,
        api_key: str,
        model: str,
        max_tokens: int,
        timeout: float,
        max_retries: int,
        base_url,
        content_format: ContentFormat = ContentFormat.PARTS,
    ):
        self.name = model
        self.content_format = content_format
        self.max_tokens = max_tokens
        self.timeout = timeout
        self.max_retries = max_retries
        # OpenAI and Azure OpenAI want max_completion_tokens (their reasoning models refuse max_tokens);
        # the servers of your own (Ollama, vLLM, LM Studio, llama.cpp) read max_tokens.
        host = (urlsplit(base_url).hostname or "") if base_url else _OPENAI_HOST
        openai_itself = host == _OPENAI_HOST or host.endswith(".openai.azure.com")
        self.max_tokens_field: Literal["max_completion_tokens", "max_tokens"] = (
            "max_completion_tokens" if openai_itself else "max_tokens"
        )
        self.client = openai.OpenAI(api_key=api_key, base_url=base_url, max_retries=0, timeout=timeout)

    keeps_state = False

    def create(self, *, system, tools, messages, deadline) -> ModelReply:
        # The one of the two fields that this server reads (max_tokens_field); omit leaves the other out.
        completion_limit = (
            self.max_tokens if self.max_tokens_field == "max_completion_tokens" else openai.omit
        )
        token_limit = self.max_tokens if self.max_tokens_field == "max_tokens" else openai.omit
        completion, started = call_with_retries(
            lambda remaining: self.client.chat.completions.create(
                model=self.name,
                messages=chat_messages(system=system, messages=messages, content_format=self.content_format),
                # OpenAI refuses an empty list of tools; a request without tools sends none (omit).
                tools=chat_tools(tools) if tools else openai.omit,
                timeout=min(self.timeout, remaining),
                max_completion_tokens=completion_limit,
                max_tokens=token_limit,
            ),
            errors=(openai.APIStatusError, openai.APIConnectionError),
            pause=self._pause_before_retry,
            deadline=deadline,
        )
        return self._reply(completion, started=started)

    def _reply(self, completion, *, started: float) -> ModelReply:
        if not completion.choices:
            return ModelReply(
                content=[], stop_reason="end_turn", model=completion.model or self.name, offline=False
            )
        choice = completion.choices[0]
        usage = completion.usage
        cached = (
            (usage.prompt_tokens_details.cached_tokens or 0) if usage and usage.prompt_tokens_details else 0
        )
        stop_reason = _STOP_REASONS.get(choice.finish_reason or "stop", "end_turn")
        if getattr(choice.message, "refusal", None):
            stop_reason = "refusal"  # OpenAI declined to answer, in words of its own
        return ModelReply(
            content=reply_content(choice.message),
            stop_reason=stop_reason,
            model=completion.model or self.name,
            offline=False,
            request_id=getattr(completion, "_request_id", None) or "",
            usage={
                "input_tokens": max(0, (usage.prompt_tokens or 0) - cached) if usage else 0,
                "output_tokens": (usage.completion_tokens or 0) if usage else 0,
                "cache_read_input_tokens": cached,
                "cache_creation_input_tokens": 0,
            },
            duration_ms=int((time.monotonic() - started) * 1000),
        )

    def _pause_before_retry(self, error: Exception, *, attempt: int, deadline: float) -> float:
        if isinstance(error, openai.APIStatusError):
            status: int | None = error.status_code
            request_id = error.request_id or ""
            asked_wait = retry_after_seconds(error.response.headers)
            # OpenAI's "out of credit" is a 429 that waiting does not cure.
            out_of_credit = error.code == "insufficient_quota" or error.status_code == 402
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


# A message of two text parts, as a turn's (the customer's words, then the reminder), that a model reads
# back as it saw it: a template that printed the array shows it the syntax, and it repeats that.
_PROBE_MESSAGE = {
    "role": "user",
    "content": [
        {
            "type": "text",
            "text": "Repeat this message back to me exactly as you received it, and nothing else.",
        },
        {"type": "text", "text": "This line is part of the same message."},
    ],
}


@dataclass(frozen=True)
class ContentFormatFinding:
    # None: the model writes content-part syntax whichever way it is sent, so no format cures it.
    needed: ContentFormat | None
    why: str


def content_format_needed(model: ChatCompletionsModel, *, deadline: float) -> ContentFormatFinding:
    """Which content format this server needs: it is asked to repeat a message of two text parts and,
    when it refuses the array or the syntax comes back, the same message as one string. Two small calls
    at most. Raises ModelFailed or ModelUnavailable when it does not answer a string either."""
    try:
        echoed = _probe(model, ContentFormat.PARTS, deadline=deadline)
    except ModelFailed as failed:
        if not failed.request_rejected:
            raise
        # Refused for what the request says: arrays, if the same words as one string are taken.
        _probe(model, ContentFormat.STRING, deadline=deadline)
        return ContentFormatFinding(
            needed=ContentFormat.STRING, why=f"it refuses content-part arrays ({failed.reason})"
        )
    echoed = html.unescape(echoed)  # a template may have HTML-escaped the parts' quotes
    syntax = CONTENT_PARTS_RE.search(echoed)
    if not syntax:
        return ContentFormatFinding(needed=ContentFormat.PARTS, why="it takes content-part arrays")
    if content_parts_in(_probe(model, ContentFormat.STRING, deadline=deadline)):
        return ContentFormatFinding(
            needed=None,
            why=f"the model writes content-part syntax (it wrote back {_quoted(echoed, syntax)}) even for a "
            "message sent as one string",
        )
    return ContentFormatFinding(
        needed=ContentFormat.STRING,
        why="its chat template shows content-part arrays to the model as text (it wrote back "
        f"{_quoted(echoed, syntax)})",
    )


def _quoted(echoed: str, syntax: re.Match) -> str:
    """What the model wrote back from where the syntax starts, on one line, short enough for the line."""
    written = " ".join(echoed[syntax.start() :].split())
    return written if len(written) <= 40 else f"{written[:40]}…"


def _probe(model: ChatCompletionsModel, content_format: ContentFormat, *, deadline: float) -> str:
    """The model's words for the probe message, sent in this format (the same client otherwise)."""
    sender = copy.copy(model)
    sender.content_format = content_format
    reply = sender.create(
        system=[{"type": "text", "text": "You check a connection."}],
        tools=[],
        messages=[_PROBE_MESSAGE],
        deadline=deadline,
    )
    return "\n".join(block["text"] for block in reply.content if block["type"] == "text")
