"""The capabilities the assistant has: the tool list both providers read, the tool rules of the system
prompt, and the one place a tool call is run. A new capability is one module and one line here."""

from collections.abc import Iterable
from typing import Any

from orders.numbers import ORDER_NUMBERS
from support.assistant.capabilities import (
    address_change,
    cancellation,
    case_status,
    delivery_problems,
    order_status,
    person,
    policies,
    receipt,
    refunds,
    returns,
)
from support.assistant.capabilities.arguments import InvalidArguments
from support.assistant.capabilities.base import (
    Answer,
    Capability,
    OrderTask,
    Reply,
    Tool,
    ToolContext,
    ToolOutcome,
    Trigger,
    error,
)
from support.assistant.understanding.wording import Waiting
from support.llm.protocol import ToolError

CAPABILITIES: tuple[Capability, ...] = (
    order_status.CAPABILITY,
    returns.CAPABILITY,
    cancellation.CAPABILITY,
    address_change.CAPABILITY,
    delivery_problems.CAPABILITY,
    case_status.CAPABILITY,
    policies.CAPABILITY,
    person.CAPABILITY,
    receipt.CAPABILITY,
    refunds.CAPABILITY,
)

_TOOLS: dict[str, Tool] = {tool.name: tool for capability in CAPABILITIES for tool in capability.tools}
TOOLS: list[dict[str, Any]] = [tool.schema() for tool in _TOOLS.values()]
TOOL_NAMES = tuple(_TOOLS)
TOOL_ARGUMENT_NAMES = frozenset(name for tool in TOOLS for name in tool["input_schema"]["properties"])
# Tools that change the store: the step that calls one is stored in the same transaction as the change.
WRITE_TOOLS = frozenset(name for name, tool in _TOOLS.items() if tool.writes)


def one_each(pairs: Iterable[tuple[Any, Any]], *, what: str) -> dict:
    """The pairs as a dict; a key two capabilities bring is refused (the later would silently win)."""
    found: dict = {}
    for key, value in pairs:
        if key in found:
            raise ValueError(f"Two capabilities bring the built-in model's {what} for {key!r}.")
        found[key] = value
    return found


# The built-in model's steps the capabilities bring: every task on one order by its kind (TASKS, the kinds,
# in the registry's order), those asked for in words of their own (ORDER_TASKS, read by the built-in
# model before its rules), its answers by the question asked, its replies by tool, and its steps for the
# message right after a capability's result.
TASK_STEPS: dict[str, OrderTask] = one_each(
    ((task.kind, task) for capability in CAPABILITIES for task in capability.order_tasks), what="task"
)
TASKS = tuple(TASK_STEPS)
ORDER_TASKS: dict[str, OrderTask] = {kind: task for kind, task in TASK_STEPS.items() if task.asks}
ANSWERS: dict[Waiting, Answer] = one_each(
    (pair for capability in CAPABILITIES for pair in capability.answers.items()), what="answer"
)
REPLIES: dict[str, Reply] = one_each(
    (pair for capability in CAPABILITIES for pair in capability.replies.items()), what="reply"
)
AFTER_RESULT: tuple[Answer, ...] = tuple(capability.after for capability in CAPABILITIES if capability.after)
# How the built-in model's rules read a message as a capability's request: each trigger with its
# capability's name (builtin/intents.py orders them with its own by precedence).
TRIGGERS: tuple[tuple[str, Trigger], ...] = tuple(
    (capability.name, trigger) for capability in CAPABILITIES for trigger in capability.triggers
)


def scope_words() -> str:
    """What the assistant helps with, in the system prompt's words: each capability's, in the registry's
    order."""
    return ", ".join(capability.scope for capability in CAPABILITIES if capability.scope)


def tool_rules() -> str:
    """The capabilities' paragraphs of the system prompt's tool rules, in the registry's order."""
    return "\n".join(capability.prompt for capability in CAPABILITIES if capability.prompt)


def tool_execute(*, name: str, arguments: Any, context: ToolContext) -> ToolOutcome:
    """Run one tool call; never raises for anything the model sent (a name that is not text included)."""
    tool = _TOOLS.get(name) if isinstance(name, str) else None
    if tool is None:
        return error(
            ToolError.UNKNOWN_TOOL, "There is no tool by that name.", available_tools=list(TOOL_NAMES)
        )
    try:
        parsed = tool.arguments.parsed(arguments)
    except InvalidArguments as invalid:
        return error(
            ToolError.INVALID_ARGUMENTS,
            "Some arguments are missing or malformed; fix them and call again.",
            problems=invalid.problems,
        )
    return tool.handler(parsed, context)


PROGRESS_WRITING = "Writing the answer…"
_PROGRESS_WORKING = "Working on it…"


def tool_progress(*, name: str, arguments: Any, customer_words: list[str]) -> str:
    """The status line while the tool `name` runs: fixed words, with the order number only when the
    customer typed it (a model's guess is never shown)."""
    tool = _TOOLS.get(name) if isinstance(name, str) else None
    with_order, without = tool.progress if tool else (_PROGRESS_WORKING, _PROGRESS_WORKING)
    order = arguments.get("order_id") if isinstance(arguments, dict) else None
    typed = (
        isinstance(order, str)
        and ORDER_NUMBERS.exact.fullmatch(order)
        and any(order in ORDER_NUMBERS.mentions(words) for words in customer_words)
    )
    return with_order.format(order=order) if typed else without
