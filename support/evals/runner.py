"""Runs a scripted customer conversation through the real turn service and checks the outcome.

The same scenarios run in CI against the offline model and, with
`manage.py run_evals`, against Claude. Expectations are about behaviour any
correct model shares: which tools were called with which arguments, in what
order; what the validator said; what the database holds afterwards.
"""

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from django.contrib.sessions.backends.db import SessionStore

from orders.models import DeliveryCase, OrderChange, OrderChangeState, ReturnRecord
from support.assistant.prompts import LONG_CONVERSATION_REMINDER, TURN_REMINDER, system_prompt_forget
from support.assistant.turn import conversation_take_turn
from support.conversations.handoff import conversation_handoff_request
from support.conversations.models import PERSON_ANSWERS, ConversationStatus, HandoffReason
from support.conversations.services import conversation_get_for_session
from support.llm.types import Model, ModelReply

ExpectedCall = tuple[str, dict[str, Any]]


@dataclass(frozen=True)
class Exchange:
    say: str = ""
    reply_contains: tuple[str, ...] = ()
    reply_excludes: tuple[str, ...] = ()
    # Press "Talk to a person" instead of saying anything.
    press_handoff: bool = False
    # What changes in the store before this turn (the world moving while the customer decides).
    before: Callable[[], None] | None = None


@dataclass(frozen=True)
class Scenario:
    name: str
    turns: tuple[Exchange, ...]
    # Every tool call of the conversation, in order. Alternatives: any one may match.
    tools: tuple[ExpectedCall, ...] = ()
    tools_alternatives: tuple[tuple[ExpectedCall, ...], ...] = ()
    # Open returns per order number afterwards (orders not named must have none).
    returns: dict[str, int] = field(default_factory=dict)
    returned_titles: tuple[str, ...] | None = None
    # Order changes made afterwards, per order number, in order (orders not named must have none).
    changes: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # Delivery problems reported afterwards, per order number: (problem, the books concerned) in order.
    cases: dict[str, tuple[tuple[str, tuple[str, ...]], ...]] = field(default_factory=dict)
    # Validator codes expected over the whole conversation (normally none).
    violations: tuple[str, ...] = ()
    setup: Callable[[], None] | None = None
    check_reminders: bool = False
    # Who answers at the end: assistant, waiting (for a person), person or closed.
    status: str = "assistant"


class RecordingModel:
    """Wraps a model and keeps every request it was sent."""

    def __init__(self, model: Model):
        self.model = model
        self.offline = model.offline
        self.name = model.name
        self.provider = model.provider
        self.keeps_state = model.keeps_state
        self.requests: list[dict] = []

    def create(
        self, *, system: list[dict], tools: list[dict], messages: list[dict], deadline: float
    ) -> ModelReply:
        self.requests.append({"system": system, "tools": tools, "messages": messages})
        return self.model.create(system=system, tools=tools, messages=messages, deadline=deadline)


def _normalized(call: ExpectedCall) -> ExpectedCall:
    """Arguments compared as the tools read them: trimmed, case-folded identifiers."""
    name, arguments = call
    clean = {}
    for key, value in (arguments or {}).items():
        if key in ("order_id", "customer_email", "topic") and isinstance(value, str):
            value = value.strip().casefold()
        elif key == "item_titles" and isinstance(value, list):
            value = sorted(title.strip().casefold() for title in value)
        elif key == "new_address" and isinstance(value, dict):
            value = {field: " ".join(str(text).split()).casefold() for field, text in value.items() if text}
        elif (key == "reason" and name == "initiate_return") or key in ("summary", "details"):
            value = "<any>"  # the customer's words, paraphrased by a real model
        clean[key] = value
    return name, clean


def scenario_run(scenario: Scenario, *, model: Model) -> list[str]:
    """Play the scenario; return what went wrong (empty when it passed). Needs the demo data loaded."""
    # Each scenario plays against its own data (its setup's changes are rolled back after it).
    system_prompt_forget()
    if scenario.setup:
        scenario.setup()
    recorder = RecordingModel(model)
    session = SessionStore()
    session.create()
    failures: list[str] = []
    calls: list[ExpectedCall] = []
    violations: list[str] = []

    for number, turn in enumerate(scenario.turns, start=1):
        requests_before = len(recorder.requests)
        if turn.press_handoff:
            conversation_handoff_request(
                session=session,
                conversation=conversation_get_for_session(session=session),
                reason=HandoffReason.CUSTOMER_BUTTON,
            )
            continue
        if turn.before:
            turn.before()
        person_answers = _status(session) in PERSON_ANSWERS
        result = conversation_take_turn(session=session, text=turn.say, model=recorder)
        if person_answers and len(recorder.requests) > requests_before:
            failures.append(f"turn {number}: the model was called while a person answers")
        if scenario.check_reminders and len(recorder.requests) > requests_before:
            # Stated here, not asked of prompts.py: the scenario checks the rule itself.
            expected = LONG_CONVERSATION_REMINDER if number > 5 else TURN_REMINDER
            sent = recorder.requests[requests_before]["messages"][-1]["content"]
            if not any(block.get("text") == expected for block in sent):
                failures.append(f"turn {number}: the customer's message did not carry the expected reminder")
        calls += [(call["name"], call["input"]) for call in result.tool_calls]
        violations += result.violations
        reply = (result.reply or "").casefold()
        for wanted in turn.reply_contains:
            if wanted.casefold() not in reply:
                failures.append(f"turn {number}: reply lacks {wanted!r}: {result.reply!r}")
        for unwanted in turn.reply_excludes:
            if unwanted.casefold() in reply:
                failures.append(f"turn {number}: reply contains {unwanted!r}: {result.reply!r}")

    got = [_normalized(call) for call in calls]
    accepted = [scenario.tools, *scenario.tools_alternatives]
    if not any(got == [_normalized(call) for call in option] for option in accepted):
        failures.append(f"tool calls {got} != expected {[_normalized(c) for c in scenario.tools]}")

    if tuple(violations) != scenario.violations:
        failures.append(f"validator codes {violations} != expected {list(scenario.violations)}")

    if _status(session) != scenario.status:
        failures.append(f"status {_status(session)!r} != expected {scenario.status!r}")

    open_returns: dict[str, int] = {}
    for record in ReturnRecord.objects.select_related("order"):
        open_returns[record.order.number] = open_returns.get(record.order.number, 0) + 1
    if open_returns != scenario.returns:
        failures.append(f"returns {open_returns} != expected {scenario.returns}")
    if scenario.returned_titles is not None:
        titles = sorted(
            ReturnRecord.objects.filter(conversations__isnull=False).values_list("items__title", flat=True)
        )
        if titles != sorted(scenario.returned_titles):
            failures.append(f"returned items {titles} != expected {sorted(scenario.returned_titles)}")

    made: dict[str, tuple[str, ...]] = {}
    # Made: one only asked of the shop that keeps the order is not (yet).
    for change in (
        OrderChange.objects.filter(state=OrderChangeState.MADE)
        .select_related("order")
        .order_by("changed_at", "id")
    ):
        made[change.order.number] = (*made.get(change.order.number, ()), change.kind)
    if made != scenario.changes:
        failures.append(f"order changes {made} != expected {scenario.changes}")

    reported: dict[str, tuple[tuple[str, tuple[str, ...]], ...]] = {}
    for case in DeliveryCase.objects.select_related("order").prefetch_related("items").order_by("id"):
        entry = (case.problem, tuple(sorted(item.title for item in case.items.all())))
        reported[case.order.number] = (*reported.get(case.order.number, ()), entry)
    if reported != scenario.cases:
        failures.append(f"delivery cases {reported} != expected {scenario.cases}")

    return failures


def _status(session) -> str:
    conversation = conversation_get_for_session(session=session)
    return conversation.status if conversation else ConversationStatus.ASSISTANT
