"""A local OpenAI-Chat-Completions-compatible HTTP server for tests: the real openai SDK talks to it.

Scripted like the Messages stub, with the same helpers (message, text, tool_use, ErrorReply): each
scripted Messages-API reply is answered as a chat completion (tool_use blocks as tool_calls with
their ids). A reply that is already a chat completion (it has "choices") is sent as it is, for what
only this API can say (malformed arguments, finish_reason "length" or "content_filter").
`requests` holds the Chat Completions requests as they came, `sent` the same read back into the
Messages API's shape; a scripted responder is given that shape too. A request whose messages OpenAI
would refuse for their order is answered 400, as OpenAI answers it.

`template` stands for the server's chat template, which decides what a content-part array becomes:
parts that the model reads as text (OpenAI, vLLM, Ollama), their Python repr printed into the prompt
(llama.cpp's server with some --chat_format templates: Jinja's str() of a list), or a 400 (servers that
take strings only). What the model is asked (`asked`, `sent`, a scripted responder's request) is what
that template made of it; `echoes_its_prompt` answers with it, as a small model imitating its prompt.
"""

import json
from enum import StrEnum

from support.testing.messages_stub import ErrorReply, MessagesStub, message, text

_FINISH = {"end_turn": "stop", "tool_use": "tool_calls", "max_tokens": "length", "refusal": "content_filter"}


def completion(*, content=None, tool_calls=(), finish_reason="stop", usage=None) -> dict:
    """A chat completion as a provider sends it; tool_calls as (id, name, arguments text)."""
    return {
        "id": "chatcmpl-stub",
        "object": "chat.completion",
        "created": 0,
        "model": "gpt-stub",
        "choices": [
            {
                "index": 0,
                "finish_reason": finish_reason,
                "message": {
                    "role": "assistant",
                    "content": content,
                    "tool_calls": [
                        {
                            "id": call_id,
                            "type": "function",
                            "function": {"name": name, "arguments": arguments},
                        }
                        for call_id, name, arguments in tool_calls
                    ]
                    or None,
                },
            }
        ],
        "usage": usage or {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
    }


def order_problem(body: dict) -> str | None:
    """What OpenAI-compatible servers refuse in a request's messages: a tool message not right after
    the assistant message whose call it answers, a call left unanswered, content missing (OpenAI),
    a call's arguments that are not a JSON object (llama.cpp's server parses them), an empty list of
    tools (OpenAI)."""
    if body.get("tools") == []:
        return "Invalid 'tools': empty array. Expected an array with minimum length 1."
    waiting: set[str] = set()
    for entry in body["messages"][1:]:
        for call in entry.get("tool_calls") or []:
            try:
                arguments = json.loads(call["function"]["arguments"])
            except json.JSONDecodeError:
                arguments = None
            if not isinstance(arguments, dict):
                return f"the arguments of call {call['id']} are not a JSON object"
        if entry["role"] == "tool":
            if entry["tool_call_id"] not in waiting:
                return f"tool message {entry['tool_call_id']} answers no call just before it"
            waiting.discard(entry["tool_call_id"])
            continue
        if waiting:
            return f"calls {sorted(waiting)} are not answered before the next message"
        if entry["role"] == "assistant":
            waiting = {call["id"] for call in entry.get("tool_calls") or []}
            if entry.get("content") is None and not waiting:
                return "an assistant message without content or tool calls"
    return None


class Template(StrEnum):
    """What the server's chat template does with a message whose content is an array of parts."""

    TAKES_PARTS = "takes parts"
    PYTHON_REPR = "python repr"
    STRINGS_ONLY = "strings only"


def messages_request(body: dict, *, template: Template = Template.TAKES_PARTS) -> dict:
    """A Chat Completions request read back into the Messages API's shape (system, tools, messages):
    what a model behind Bookly's boundary is asked, after the adapter's round trip and the template."""
    system = [{"type": "text", "text": body["messages"][0]["content"]}]
    tools = [
        {
            "name": tool["function"]["name"],
            "description": tool["function"].get("description", ""),
            "input_schema": tool["function"]["parameters"],
        }
        for tool in body.get("tools", [])
    ]
    messages: list[dict] = []
    for entry in body["messages"][1:]:
        if entry["role"] == "assistant":
            blocks = [{"type": "text", "text": entry["content"]}] if entry.get("content") else []
            blocks += [
                {
                    "type": "tool_use",
                    "id": call["id"],
                    "name": call["function"]["name"],
                    "input": json.loads(call["function"]["arguments"]),
                }
                for call in entry.get("tool_calls") or []
            ]
            messages.append({"role": "assistant", "content": blocks})
            continue
        if entry["role"] == "tool":
            block = {"type": "tool_result", "tool_use_id": entry["tool_call_id"], "content": entry["content"]}
        else:
            content = entry["content"]
            if isinstance(content, list) and template == Template.PYTHON_REPR:
                content = str(content)  # {{ message.content }} of a list, as Jinja prints it
            parts = [{"type": "text", "text": content}] if isinstance(content, str) else content
            block = None
        if messages and messages[-1]["role"] == "user":
            messages[-1]["content"] += [block] if block else parts
        else:
            messages.append({"role": "user", "content": [block] if block else parts})
    return {"system": system, "tools": tools, "messages": messages}


def echoes_its_prompt(request: dict) -> dict:
    """A responder: a model that writes back the last message from the user side as it read it."""
    last = request["messages"][-1]["content"]
    return message(text("\n".join(block["text"] for block in last if block["type"] == "text")))


class ChatCompletionsStub(MessagesStub):
    template = Template.TAKES_PARTS

    def asked(self, body: dict) -> dict:
        return messages_request(body, template=self.template)

    def problem(self, body: dict) -> str | None:
        if self.template == Template.STRINGS_ONLY and any(
            isinstance(entry.get("content"), list) for entry in body["messages"]
        ):
            return "messages: content must be a string"
        return order_problem(body)

    def reset(self, *replies, template: Template = Template.TAKES_PARTS) -> None:
        super().reset(*replies)
        self.template = template

    def rendered(self, reply: dict) -> dict:
        if "choices" in reply:
            return reply
        blocks = reply["content"]
        words = " ".join(block["text"] for block in blocks if block["type"] == "text")
        calls = [
            (block["id"], block["name"], json.dumps(block["input"]))
            for block in blocks
            if block["type"] == "tool_use"
        ]
        usage = reply.get("usage", {})
        return completion(
            content=words or None,
            tool_calls=calls,
            finish_reason=_FINISH.get(reply["stop_reason"], "stop"),
            usage={
                "prompt_tokens": usage.get("input_tokens", 100) + usage.get("cache_read_input_tokens", 0),
                "completion_tokens": usage.get("output_tokens", 20),
                "total_tokens": 0,
                "prompt_tokens_details": {"cached_tokens": usage.get("cache_read_input_tokens", 0)},
            },
        )

    def error_body(self, reply: ErrorReply) -> dict:
        return {"error": {"message": reply.message, "type": reply.error_type, "code": reply.error_code}}
