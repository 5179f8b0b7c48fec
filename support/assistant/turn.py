"""One customer turn: the tool loop behind the four guard layers, stored atomically.

Read it top to bottom in conversation_take_turn:
1. begin: clean the message, find or start the session's conversation, check
   the turn limit, take the lease and store the customer's words (one commit);
2. the tool loop: call the model, run the tools it asks for, call it again
   with their results, until it answers in text; no transaction and no
   database connection is held while the model thinks;
3. validate the reply (a bad one is replaced by the fallback, never stored);
4. commit everything the turn produced in one transaction that first proves
   the lease is still ours.
A step that writes to the store (a return) is the exception: it is stored in
the same transaction as the write, so that nothing can separate the two; if
the model then fails, the customer reads the write's outcome in fixed words.
A failure at any step frees the conversation and leaves the stored history a
valid Messages API request: adjacent customer messages are merged when the
history is sent, and no tool_use is ever stored without its tool_result.
"""

import copy
import hashlib
import logging
import time
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass, field

from django.conf import settings
from django.db import connections, transaction
from django.utils import timezone

from store.text import text_multi_line
from support.assistant.budget import tool_calls_refused
from support.assistant.capabilities.base import ToolContext, ToolOutcome
from support.assistant.capabilities.policies import policy_answer
from support.assistant.capabilities.registry import (
    PROGRESS_WRITING,
    TOOL_ARGUMENT_NAMES,
    TOOL_NAMES,
    TOOLS,
    WRITE_TOOLS,
    tool_execute,
    tool_progress,
)
from support.assistant.claims import ToolResult
from support.assistant.configured import model_for_turn
from support.assistant.not_made import not_made_told
from support.assistant.outcomes import (
    FAILED_REPLIES,
    STUCK_HANDOFF_REPLY,
    STUCK_REPLY,
    TOO_LONG_REPLY,
    TURN_LIMIT_REPLY,
    reply_leaves_dead_end,
    reply_outcome,
)
from support.assistant.prompts import return_policy_terms, system_prompt, turn_reminder
from support.assistant.request import (
    CACHE_POINT,
    history_for_request,
    text_of,
    tool_results_of,
    whole_sentences,
    with_cache_point,
)
from support.assistant.validator import FALLBACK_REPLY, reply_validate
from support.conversations.handoff import conversation_customer_message_keep, conversation_end
from support.conversations.models import (
    PERSON_ANSWERS,
    Conversation,
    ConversationStatus,
    HandoffReason,
    MessageRole,
)
from support.conversations.not_made import changes_not_made_untold
from support.conversations.selectors import conversation_has_ended, session_signed_in_email
from support.conversations.services import (
    ConversationEnded,
    NewMessage,
    TurnInProgress,
    TurnLease,
    conversation_get_for_session,
    conversation_turn_abandon,
    conversation_turn_begin,
    conversation_turn_commit,
    conversation_turn_keep,
    storable,
)
from support.insight.metrics import model_call_observe, turn_observe
from support.insight.traces import (
    VOTABLE_SOURCES,
    ModelCallResult,
    ReplySource,
    ToolCallRecord,
    TurnOutcome,
    TurnRecord,
    arguments_shape,
)
from support.llm.protocol import ToolError, protocol_tags_neutralised
from support.llm.types import Model, ModelFailed, ModelReply, ModelUnavailable

logger = logging.getLogger(__name__)

# The result of a call past BOOKLY_MAX_TOOL_CALLS_PER_RESPONSE: fixed words, never the call's input.
_NOT_RUN_PAST_LIMIT = {
    "error": ToolError.TOO_MANY_TOOL_CALLS,
    "message": "Not run: one response may make only a few tool calls. Make the calls that matter, fewer.",
}

# Tools never change, so their schema (with the cache breakpoint on the last
# one) is built once per process and sent byte-identical every time.
_TOOLS_FOR_REQUEST = copy.deepcopy(TOOLS)
_TOOLS_FOR_REQUEST[-1]["cache_control"] = CACHE_POINT


class InvalidMessage(Exception):
    def __init__(self, detail: str):
        super().__init__(detail)
        self.detail = detail


@dataclass
class TurnResult:
    reply: str | None  # None when a person, not the assistant, answers the conversation
    offline: bool
    turn: int
    status: ConversationStatus = ConversationStatus.ASSISTANT
    violations: tuple[str, ...] = ()
    tool_calls: list[dict] = field(default_factory=list)
    model_ms: int = 0  # time spent waiting for the model
    votable: bool = False  # the reply is stored with its trace: the customer may say if it helped
    conversation_id: int | None = None  # the conversation that took the message


@dataclass
class RunningTurn:
    """One turn while it runs: what the model is sent, and everything the turn has produced."""

    lease: TurnLease
    messages: list[dict]  # the request's history; grows with each tool step
    customer_words: list[str]  # what the customer wrote, and
    tool_results: list[ToolResult]  # what the tools returned: all a reply may draw its facts from
    tools: ToolContext
    previous_reply: str  # what the customer read last from the assistant ("" if nothing yet)
    progress: Callable[[str], None]  # tells the customer's page what the turn is doing
    produced: list[NewMessage] = field(default_factory=list)  # stored when the turn commits
    kept: int = 0  # how many of `produced` are stored already (a step that wrote)
    receipts: list[str] = field(default_factory=list)  # the fixed words of the writes this turn made
    model_calls: list[ModelReply] = field(default_factory=list)
    tool_calls: list[dict] = field(default_factory=list)  # name, input and result, for evals
    tool_records: list[ToolCallRecord] = field(default_factory=list)  # for the trace
    # Whose words the customer reads when the loop ends without the model's own reply.
    reply_source: ReplySource = ReplySource.MODEL
    # How many of tool_results earlier turns gave: links, phone numbers and promises need this turn's.
    earlier_results: int = 0
    # What the built-in model recorded with its text reply: kept only with that reply as written.
    model_state: dict | None = None

    @property
    def conversation(self) -> Conversation:
        return self.lease.conversation

    @property
    def model_ms(self) -> int:
        return sum(call.duration_ms for call in self.model_calls)

    def add_tool_step(self, tool_use: list[dict], results: list[dict]) -> None:
        """The model's tool calls and their results, sent with the next call and stored together."""
        for message in (
            NewMessage(MessageRole.ASSISTANT, tool_use),
            NewMessage(MessageRole.USER, results),
        ):
            self.messages.append({"role": message.role, "content": message.content})
            self.produced.append(message)
        self.tool_results += tool_results_of(tool_use, results)

    def record(self, *, started: float, outcome: TurnOutcome, **details) -> TurnRecord:
        """The turn's trace so far; `started` is its time.monotonic() start."""
        return TurnRecord(
            outcome=outcome,
            total_ms=round((time.monotonic() - started) * 1000),
            model_ms=self.model_ms,
            tool_calls=tuple(self.tool_records),
            **details,
        )

    def keep(self) -> None:
        """Store what the turn has produced so far, now (in the transaction of a write)."""
        conversation_turn_keep(
            lease=self.lease, messages=self.produced[self.kept :], first=self.lease.next_position + self.kept
        )
        self.kept = len(self.produced)


def message_clean(*, text) -> str:
    """The customer's message without control or format characters, or InvalidMessage saying why not."""
    if not isinstance(text, str):
        raise InvalidMessage("Please send your message as text.")
    text = text_multi_line(text)
    if not text:
        raise InvalidMessage("Please type a message first.")
    text = protocol_tags_neutralised(text)
    limit = settings.BOOKLY_MAX_MESSAGE_CHARS
    if len(text) > limit:
        raise InvalidMessage(f"Messages can be at most {limit} characters. Please shorten yours.")
    return text


def log_id(conversation_id: int) -> str:
    """A stable, non-reversible identifier of a conversation for log lines."""
    return hashlib.sha256(f"{settings.SECRET_KEY}:conversation:{conversation_id}".encode()).hexdigest()[:12]


def _silent(status: str) -> None:
    pass


def conversation_take_turn(
    *,
    session,
    text: str,
    model: Model | None = None,
    progress: Callable[[str], None] = _silent,
    client_address: str = "",
) -> TurnResult:
    """Answer one customer message. Raises InvalidMessage, TurnInProgress (ConversationEnded when a sign-out
    or a new conversation ended this one while the turn ran), ModelUnavailable, ModelFailed.
    `progress` is called with a line for the customer as each step starts (a tool, writing the answer);
    the reply itself is only ever returned, after the validator passed it. `client_address` is the
    client's IP as the rate limits see it ("" when none): failed order/email checks count by it too."""
    started, begun = time.monotonic(), timezone.now()
    model = model or model_for_turn()
    text = message_clean(text=text)
    conversation = conversation_get_for_session(session=session)
    if conversation is not None and conversation.status in PERSON_ANSWERS:
        # A person answers (or is on the way): their words wait for them, and the model is not called.
        kept = conversation_customer_message_keep(conversation=conversation, text=text)
        if kept is not None:
            return TurnResult(
                reply=None,
                offline=model.offline,
                turn=kept.turn_count,
                status=ConversationStatus(kept.status),
                conversation_id=kept.pk,
            )
        # Handed back or closed a moment ago: answered as the conversation is now.
        conversation = conversation_get_for_session(session=session)
    if conversation is not None and conversation.status == ConversationStatus.CLOSED:
        # Staff closed it: the customer's next words start a new conversation with the assistant.
        conversation_end(conversation=conversation)
        conversation = None
    turns_so_far = conversation.turn_count if conversation else 0
    if turns_so_far >= settings.BOOKLY_MAX_TURNS_PER_CONVERSATION:
        return TurnResult(
            reply=TURN_LIMIT_REPLY,
            offline=model.offline,
            turn=turns_so_far,
            conversation_id=conversation.pk if conversation else None,
        )
    # The lease counts this turn only if turn_count is still as read, so its number is known now.
    signed_in = session_signed_in_email(session=session)
    lease, history = conversation_turn_begin(
        session=session,
        conversation=conversation,
        customer_message=_customer_message(text, turns_so_far + 1, signed_in=signed_in),
    )
    turn = None
    try:
        turn = _running_turn(lease, history, progress, signed_in=signed_in, client_address=client_address)
        reply_blocks = _tool_loop(turn, model)
        handoff: tuple[str, str] | None = None
        violations: tuple[str, ...]
        if asked := turn.tools.handoff:
            # What happens next is a promise only our tool can word: the customer reads its words,
            # and whatever the model said instead is neither shown nor kept.
            reply, violations, handoff = asked.reply, (), (asked.reason, asked.summary)
            turn.reply_source = ReplySource.FIXED
            if turn.receipts:
                # A return made before the handover is told too: staff take over, the RMA stays known.
                reply = " ".join([*turn.receipts, reply])
        else:
            reply, violations = _validated(turn, text_of(reply_blocks), customer_message=text)
        if not handoff and reply in FAILED_REPLIES and turn.previous_reply in FAILED_REPLIES:
            reply, handoff = STUCK_HANDOFF_REPLY, (HandoffReason.ASSISTANT_STUCK, f"Last message: {text}")
            turn.reply_source = ReplySource.FIXED
        # The state belongs to the reply the model wrote: any other words the customer reads instead
        # (the fallback, a receipt, a handover) ask nothing it could be waiting for.
        as_written = reply == text_of(reply_blocks) and turn.reply_source == ReplySource.MODEL
        if reply != text_of(reply_blocks):
            reply_blocks = [{"type": "text", "text": reply}]
        outcome = reply_outcome(reply, violations, handed_off=bool(handoff))
        dead_end = reply_leaves_dead_end(reply, outcome=outcome)
        # A change the store did not make (of an order asked about here, or looked up now) is told
        # before anything else about its order, in our fixed words, once; one asked in this very turn
        # and refused while it ran, after the reply that says it was asked.
        not_made = changes_not_made_untold(
            conversation_id=lease.conversation.pk, order_ids=turn.tools.orders_found
        )
        before, after = not_made_told(not_made, reply=reply, asked_since=begun)
        if before or after:
            reply = "\n\n".join(part for part in (before, reply, after) if part)
            reply_blocks = [
                *([{"type": "text", "text": before}] if before else []),
                *reply_blocks,
                *([{"type": "text", "text": after}] if after else []),
            ]
        turn.produced.append(
            NewMessage(
                MessageRole.ASSISTANT,
                reply_blocks,
                visible_text=reply,
                violations=violations,
                model_state=turn.model_state if as_written and not handoff else None,
            )
        )
        record = turn.record(
            started=started,
            outcome=outcome,
            dead_end=dead_end,
            reply_source=turn.reply_source,
            violations=violations,
            handoff_reason=handoff[0] if handoff else "",
        )
        status = conversation_turn_commit(
            lease=lease,
            messages=turn.produced[turn.kept :],
            first=lease.next_position + turn.kept,
            model_calls=turn.model_calls,
            eligibility_verified=turn.tools.eligibility_verified,
            change_checks=turn.tools.change_checks,
            orders_found=turn.tools.orders_found,
            handoff=handoff,
            trace=record,
            changes_told=[link for change in not_made for link in change.links],
        )
    except BaseException as error:
        # Traced and counted whatever went wrong (the model failed, the lease was lost, a bug), but not
        # a worker being stopped: that is no turn's outcome.
        failed_record = None
        if turn and isinstance(error, Exception):
            failed_record = turn.record(
                started=started,
                outcome=TurnOutcome.ERROR,
                reply_source=ReplySource.NONE,
                error=type(error).__name__,
            )
        try:
            conversation_turn_abandon(
                lease=lease,
                model_calls=turn.model_calls if turn else [],
                set_aside_unanswered=_poisons_history(error),
                trace=failed_record,
            )
        except Exception:
            logger.exception(
                "could not clean up after a failed turn (conversation=%s)", log_id(lease.conversation.pk)
            )
        if failed_record:
            turn_observe(failed_record)
        raise
    turn_observe(record)
    return TurnResult(
        reply=reply,
        offline=model.offline,
        turn=lease.number,
        status=status,
        violations=violations,
        tool_calls=turn.tool_calls,
        model_ms=turn.model_ms,
        votable=turn.reply_source in VOTABLE_SOURCES and not handoff,
        conversation_id=lease.conversation.pk,
    )


def _poisons_history(error: BaseException) -> bool:
    """Whether the customer's unanswered words must be set aside, so that the next turn can be answered:
    when the model API refused them, and when the turn failed in a way nobody foresaw (a bug, perhaps
    in reading those very words), since every later turn would send them again. Not when the model
    was merely unavailable or failed (try again later), nor when a worker is being stopped, nor when
    the turn lost its conversation (another turn took it, or it ended: its words were not the trouble)."""
    if isinstance(error, TurnInProgress):
        return False
    if isinstance(error, ModelFailed):
        return error.request_rejected
    return isinstance(error, Exception) and not isinstance(error, ModelUnavailable)


def _customer_message(text: str, number: int, *, signed_in: str = "") -> NewMessage:
    """The customer's words with this turn's reminder (saying who the store signed in, if it did), as
    stored and sent."""
    return NewMessage(
        MessageRole.USER,
        [
            {"type": "text", "text": text},
            {"type": "text", "text": turn_reminder(turn=number, signed_in=signed_in)},
        ],
        visible_text=text,
    )


def _running_turn(
    lease: TurnLease,
    history: list[dict],
    progress: Callable[[str], None],
    *,
    signed_in: str,
    client_address: str = "",
) -> RunningTurn:
    sent = [message for message in history if not message["set_aside"]]
    replies = [message["visible_text"] for message in history if message["role"] == MessageRole.ASSISTANT]
    earlier = tool_results_of(
        [block for m in sent if m["role"] == MessageRole.ASSISTANT for block in m["content"]],
        [block for m in sent if m["role"] == MessageRole.USER for block in m["content"]],
    )
    customer_words = [m["visible_text"] for m in sent if m["role"] == MessageRole.USER and m["visible_text"]]
    return RunningTurn(
        previous_reply=next((reply for reply in reversed(replies) if reply), ""),
        lease=lease,
        messages=history_for_request(sent),
        # The email the store vouched for counts as the customer's own words: a reply may use it.
        customer_words=[signed_in, *customer_words] if signed_in else customer_words,
        tool_results=earlier,
        earlier_results=len(earlier),
        tools=ToolContext(
            conversation=lease.conversation,
            eligibility_verified=set(lease.conversation.eligibility_verified),
            change_checks=copy.deepcopy(lease.conversation.change_checks or {}),
            turn=lease.number,
            customer_said=customer_words[-1] if customer_words else "",
            signed_in_email=signed_in,
            client_address=client_address,
        ),
        progress=progress,
    )


def _tool_loop(turn: RunningTurn, model: Model) -> list[dict]:
    """Call the model until it answers in text; returns the reply's text blocks (not yet validated)."""
    system = [{"type": "text", "text": system_prompt(), "cache_control": CACHE_POINT}]
    calls_left = settings.BOOKLY_MAX_MODEL_CALLS_PER_TURN
    first_step = True
    while True:
        connections_release()
        try:
            response = model.create(
                system=system,
                tools=_TOOLS_FOR_REQUEST,
                messages=with_cache_point(turn.messages, keeps_state=getattr(model, "keeps_state", False)),
                deadline=turn.lease.deadline,
            )
        except (ModelUnavailable, ModelFailed) as error:
            failed = (
                ModelCallResult.UNAVAILABLE if isinstance(error, ModelUnavailable) else ModelCallResult.FAILED
            )
            model_call_observe(result=failed)
            if not turn.receipts:
                raise
            turn.reply_source = ReplySource.RECEIPT
            # The return is made and stored: tell the customer so, instead of "try again".
            logger.warning(
                "model failed after a write; answered with its receipt: %s conversation=%s",
                type(error).__name__,
                log_id(turn.conversation.pk),
            )
            return [{"type": "text", "text": " ".join(turn.receipts)}]
        turn.model_calls.append(response)
        model_call_observe(result=ModelCallResult.OK, usage=response.usage)
        calls_left -= 1
        # What the customer reads, what is stored and what the model is sent again are the same.
        content = storable(response.content)
        tool_uses = [block for block in content if block["type"] == "tool_use"]

        if response.stop_reason == "refusal":
            # The provider stopped the answer itself (a safety or content filter): nothing it wrote
            # is shown, and no tool it asked for runs.
            turn.reply_source = ReplySource.FIXED
            return [{"type": "text", "text": FALLBACK_REPLY}]
        if response.stop_reason == "max_tokens":
            # Half a sentence is never shown. A tool call cut short cannot be
            # run, and the text before it only announced it.
            text = "" if tool_uses else whole_sentences(text_of(content))
            if not text:
                turn.reply_source = ReplySource.RECEIPT if turn.receipts else ReplySource.FIXED
            return [{"type": "text", "text": text or " ".join(turn.receipts) or TOO_LONG_REPLY}]
        if not tool_uses:
            turn.model_state = response.state
            return [block for block in content if block["type"] == "text"]

        if conversation_has_ended(conversation_id=turn.conversation.pk):
            # Signed out (or another customer signed in) while the model thought: no tool runs for
            # whoever the conversation was with, and the customer's page hears no step of it.
            raise ConversationEnded
        # One response runs this many calls at most: a message listing 160 emails is no 160 checks.
        runnable = settings.BOOKLY_MAX_TOOL_CALLS_PER_RESPONSE if calls_left else 0
        if len(tool_uses) > runnable and calls_left:
            tool_calls_refused(count=len(tool_uses) - runnable)
        writes = any(
            isinstance(block["name"], str) and block["name"] in WRITE_TOOLS for block in tool_uses[:runnable]
        )
        with transaction.atomic() if writes else nullcontext():
            results, outcomes = [], []
            for index, block in enumerate(tool_uses):
                run = index < runnable
                if run:
                    turn.progress(
                        tool_progress(
                            name=block["name"], arguments=block["input"], customer_words=turn.customer_words
                        )
                    )
                tool_started = time.monotonic()
                if run:
                    outcome = tool_execute(name=block["name"], arguments=block["input"], context=turn.tools)
                elif not calls_left:
                    # The model could never read this result: do not act on the call.
                    outcome = ToolOutcome(
                        {"error": ToolError.CALL_LIMIT_REACHED, "message": "Not run."}, is_error=True
                    )
                else:
                    outcome = ToolOutcome(_NOT_RUN_PAST_LIMIT, is_error=True)
                if outcome.receipt:
                    turn.receipts.append(outcome.receipt)
                turn.tool_records.append(
                    ToolCallRecord(
                        # Only names we know are kept: a model's invented tool name is "unknown".
                        tool=block["name"] if block["name"] in TOOL_NAMES else "unknown",
                        arguments=arguments_shape(arguments=block["input"], names=TOOL_ARGUMENT_NAMES),
                        result=outcome.result.get("error", "error") if outcome.is_error else "ok",
                        ms=round((time.monotonic() - tool_started) * 1000),
                    )
                )
                turn.tool_calls.append(
                    {"name": block["name"], "input": block["input"], "result": outcome.result}
                )
                results.append(outcome.as_block(block["id"]))
                outcomes.append((block["name"], outcome))
            turn.add_tool_step(content, results)
            if writes:
                turn.keep()
        if not calls_left:
            turn.reply_source = ReplySource.RECEIPT if turn.receipts else ReplySource.FIXED
            return [{"type": "text", "text": " ".join(turn.receipts) or STUCK_REPLY}]
        if first_step and (quoted := policy_answer(calls=outcomes, customer_said=turn.tools.customer_said)):
            # A question only the FAQ answers: its words are the reply, one model call instead of two
            # (the second would only copy them). The validator still reads them, as every reply.
            turn.reply_source = ReplySource.FAQ
            return [{"type": "text", "text": quoted}]
        first_step = False
        turn.progress(PROGRESS_WRITING)


def _validated(turn: RunningTurn, reply: str, *, customer_message: str) -> tuple[str, tuple[str, ...]]:
    """The reply if the validator passes it, else the fallback (or, after a write, the write's receipt:
    what was done is never lost with a bad reply); with the validator's codes."""
    verdict = reply_validate(
        reply=reply,
        customer_message=customer_message,
        customer_words=turn.customer_words,
        tool_results=turn.tool_results,
        instructions=return_policy_terms(),
        turn_results=turn.tool_results[turn.earlier_results :],
        system_prompt=system_prompt(),
    )
    if verdict.ok:
        return reply, ()
    turn.reply_source = ReplySource.RECEIPT if turn.receipts else ReplySource.FALLBACK
    logger.warning(
        "reply rejected by validator: codes=%s conversation=%s turn=%d",
        ",".join(verdict.violations),
        log_id(turn.conversation.pk),
        turn.lease.number,
    )
    return " ".join(turn.receipts) or FALLBACK_REPLY, verdict.violations


def connections_release() -> None:
    """Give back this thread's database connections outside a transaction, before a long wait (a slow
    model call, a streamed turn): a pool can lend them meanwhile."""
    for connection in connections.all(initialized_only=True):
        if not connection.in_atomic_block:
            connection.close()
