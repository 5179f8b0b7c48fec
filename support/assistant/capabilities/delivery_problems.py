"""Delivery problems (never came, late, a damaged, wrong or missing book): a case for staff, who take
the conversation."""

from typing import Annotated

from pydantic import Field

from orders.emails import DELIVERY_CASE_NEXT_STEPS
from orders.models import ITEM_PROBLEMS, DeliveryProblem
from orders.patterns import EMAIL_MENTION_RE
from orders.services import ITEMS_NEEDED, DeliveryCaseRefused
from support.assistant.capabilities.arguments import (
    MAX_SUMMARY_LENGTH,
    OrderArguments,
    ReasonArgument,
    TitlesArgument,
)
from support.assistant.capabilities.base import (
    Capability,
    HandoffAsked,
    OrderTask,
    Tool,
    ToolContext,
    ToolOutcome,
    Trigger,
    error,
    items_titled,
    titles_joined,
    verified_order,
)
from support.assistant.capabilities.person import HANDED_OVER_REPLY
from support.assistant.understanding.customer_words import named_titles, plain
from support.assistant.understanding.history import Intent, ToolCall
from support.assistant.understanding.message import Message
from support.assistant.understanding.step import Reading, TaskAt
from support.assistant.understanding.vocabulary import (
    BOTH_RE,
    MAX_REASON_CHARS,
    RETURN_STATUS_RE,
    WANTS_RETURN_RE,
    delivery_problem,
)
from support.assistant.understanding.wording import GENERIC_ERROR_REPLY, Waiting
from support.conversations.services import conversation_delivery_case_open
from support.llm.protocol import HandoffAsk


class ReportDeliveryProblemArguments(OrderArguments):
    problem: Annotated[DeliveryProblem, Field(strict=False)]
    item_titles: TitlesArgument | None = None
    details: Annotated[ReasonArgument, Field(description="In the customer's words.")]


def report_delivery_problem(args: ReportDeliveryProblemArguments, context: ToolContext) -> ToolOutcome:
    order = verified_order(args, context)
    if isinstance(order, ToolOutcome):
        return order
    items = items_titled(order, args.item_titles)
    if isinstance(items, ToolOutcome):
        return items
    problem = args.problem
    try:
        case, created = conversation_delivery_case_open(
            conversation=context.conversation, order=order, problem=problem, items=items, details=args.details
        )
    except DeliveryCaseRefused as refused:
        if refused.code == ITEMS_NEEDED:
            return error(
                ITEMS_NEEDED,
                "Ask the customer which of these books it concerns, then call again with item_titles.",
                order_titles=[item.title for item in order.items.all()],
            )
        return error(refused.code, refused.message)  # no delivery to look into yet: the store's reason
    concerned = [item.title for item in case.items.all()] if problem in ITEM_PROBLEMS else []
    what = DeliveryProblem(problem).label.lower() + (f" ({titles_joined(concerned)})" if concerned else "")
    next_steps = DELIVERY_CASE_NEXT_STEPS[problem]
    receipt = f"I've reported this as case {case.pk} for order {order.number}: {what}. {next_steps}"
    summary = f"Case {case.pk}, order {order.number}: {what}. The customer says: {args.details}"
    # The case goes to staff with the conversation: they are told what they need in one line.
    context.handoff = HandoffAsked(
        reason=HandoffAsk.NEEDS_STAFF, summary=summary[:MAX_SUMMARY_LENGTH], reply=HANDED_OVER_REPLY
    )
    result = {
        "case_number": case.pk,
        "order_id": order.number,
        "problem": problem.value,
        "items": concerned,
        "next_steps": next_steps,
        "tell_the_customer": f"{receipt} {HANDED_OVER_REPLY}",
    }
    if not created:
        result["already_reported"] = True
    return ToolOutcome(result, receipt=receipt)


# --- The built-in model's steps ---


def problem_report(units: list[str], start: int, arguments: dict, *, problem: str) -> ToolCall:
    """Report the problem told at `start`, in the customer's words (their email left out)."""
    details = " ".join(EMAIL_MENTION_RE.sub("", units[start]).split())
    if len(details) > MAX_REASON_CHARS:
        details = details[:MAX_REASON_CHARS].rsplit(" ", 1)[0]
    return ToolCall(
        "report_delivery_problem", {**arguments, "problem": problem, "details": details or "Not given"}
    )


def _problem_step(task: TaskAt) -> ToolCall:
    return problem_report(
        task.reading.units, task.start, task.arguments, problem=task.reading.intents[task.start].topic
    )


def _answer_which_books(reading: Reading) -> ToolCall | None:
    """The answer to "which of the books?": the report again with the titles named, or None."""
    history = reading.history
    asked = [use for use, result in history.calls if use.get("name") == "report_delivery_problem"]
    results = [result for use, result in history.calls if use.get("name") == "report_delivery_problem"]
    if not asked or results[-1].get("error") != ITEMS_NEEDED:
        return None
    titles = results[-1].get("order_titles") or []
    latest = plain(history.units[-1])
    named = named_titles(history.units[-1:], titles) or (titles if BOTH_RE.search(latest) else None)
    if not named:
        return None
    return ToolCall("report_delivery_problem", {**asked[-1].get("input", {}), "item_titles": named})


# --- The capability ---


def _reports_a_problem(message: Message) -> Intent | None:
    """A delivery gone wrong, reported for staff to put right (a return asked for, or a return's status,
    is no report)."""
    problem = delivery_problem(message.text)
    if problem and not WANTS_RETURN_RE.search(message.text) and not RETURN_STATUS_RE.search(message.text):
        return Intent("problem", problem)
    return None


CAPABILITY = Capability(
    name="delivery_problems",
    scope="delivery problems",
    route="problem",
    triggers=(
        Trigger(
            90, _reports_a_problem, task="problem", over=frozenset({"returns", "order_status"}), stands=True
        ),
    ),
    tools=(
        Tool(
            name="report_delivery_problem",
            description=(
                "A delivery gone wrong (never came, late, a damaged, wrong or missing book) becomes a case "
                "for staff, who take the chat. Then say only tell_the_customer."
            ),
            arguments=ReportDeliveryProblemArguments,
            handler=report_delivery_problem,
            progress=(
                "Reporting the problem with order {order}…",
                "Reporting the problem with your order…",
            ),
            writes=True,
        ),
    ),
    prompt="- report_delivery_problem: not when a return or refund is asked for.",
    order_tasks=(
        OrderTask(
            kind="problem",
            lead="I'm sorry about that. I can report it to our team.",
            tool="report_delivery_problem",
            call=_problem_step,
        ),
    ),
    answers={Waiting.WHICH_BOOKS: _answer_which_books},
    replies={
        "report_delivery_problem": lambda _reading, result: (
            result.get("tell_the_customer") or GENERIC_ERROR_REPLY
        )
    },
)
