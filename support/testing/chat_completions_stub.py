"""A local OpenAI-Chat-Completions-compatible HTTP server for tests: the real openai SDK talks to it.

Scripted like the Messages stub, with the same helpers (message, text, tool_use, ErrorReply): each
scripted Messages-API reply is answered as a chat completion (tool_use blocks as tool_calls with
their ids). A reply that is already a chat completion (it has "choices") is sent as it is, for what
only this API can say (malformed arguments, finish_reason "length" or "content_filter").
`requests` holds the Chat Completions requests as they came, `sent` the same read back into the
Messages API's shape; a scripted responder is given that shape too. A request whose messages OpenAI
would refuse for their order is answered 400, as OpenAI answers it.
"""

import json

from support.testing.messages_stub import ErrorReply, MessagesStub

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
    a call's arguments that are not a JSON object (llama.cpp's server parses them)."""
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


def messages_request(body: dict) -> dict:
    """A Chat Completions request read back into the Messages API's shape (system, tools, messages):
    what a model behind Bookly's boundary is asked, after the adapter's round trip."""
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
            parts = [{"type": "text", "text": content}] if isinstance(content, str) else content
            block = None
        if messages and messages[-1]["role"] == "user":
            messages[-1]["content"] += [block] if block else parts
        else:
            messages.append({"role": "user", "content": [block] if block else parts})
    return {"system": system, "tools": tools, "messages": messages}


class ChatCompletionsStub(MessagesStub):
    def asked(self, body: dict) -> dict:
        return messages_request(body)

    def problem(self, body: dict) -> str | None:
        return order_problem(body)

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
