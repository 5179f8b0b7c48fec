"""What every model behind the boundary speaks: the reply, the protocol a model implements, its errors.

Claude (support.llm.claude), any OpenAI-compatible provider
(support.llm.chat_completions, which translates) and the offline model
(support.assistant.builtin) all speak the Messages API's shapes (content blocks `text`
and `tool_use`, the same stop reasons and usage fields), so everything behind
this boundary runs unchanged whichever answers.
"""

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Protocol


@dataclass(frozen=True)
class ModelReply:
    content: list[dict[str, Any]]
    stop_reason: str
    model: str
    offline: bool
    request_id: str = ""
    usage: dict[str, int] = field(default_factory=dict)
    duration_ms: int = 0
    # What a model that keeps its own state (keeps_state) recorded with a text reply: what it waits for
    # next, as data. Stored with the reply only when the customer reads the reply as written.
    state: dict[str, Any] | None = None


class ModelUnavailable(Exception):
    """The model is rate-limited, overloaded, unreachable, timed out or out of credit: try later."""

    def __init__(self, reason: str, *, retry_after: int, request_id: str = "", outage: bool = True):
        super().__init__(reason)
        self.reason = reason
        self.retry_after = retry_after
        self.request_id = request_id
        # False when the turn ran out of its own time before asking: the provider may be fine.
        self.outage = outage


class ModelFailed(Exception):
    """The API refused the request for another reason: its content (`request_rejected`: 400, 413,
    422), or our credentials or a bug on our side."""

    def __init__(self, reason: str, *, request_id: str = "", request_rejected: bool = False):
        super().__init__(reason)
        self.reason = reason
        self.request_id = request_id
        self.request_rejected = request_rejected


class Model(Protocol):
    offline: bool
    name: str
    # Who answers, for operators ("Claude", "OpenAI-compatible", "built-in offline model").
    provider: str
    # Whether it is sent back the state it recorded with its replies, as "state" beside an assistant
    # message's "content" (only the built-in model: no provider is ever sent it).
    keeps_state: bool

    def create(
        self, *, system: list[dict], tools: list[dict], messages: list[dict], deadline: float
    ) -> ModelReply: ...


class ContentFormat(StrEnum):
    """How an OpenAI-compatible server is sent a message's content (OPENAI_CONTENT_FORMAT). Here, not in
    the adapter, so that settings can check the value without importing a provider's SDK."""

    # The customer's words and the turn's reminder as an array of text parts, each a block of its own as
    # with Claude: what OpenAI, Azure OpenAI, vLLM and Ollama take.
    PARTS = "parts"
    # Every message's content as one string: for servers whose chat template does not take arrays and
    # refuses them, or worse, shows the model their Python repr (llama.cpp's server with some formats).
    STRING = "string"
