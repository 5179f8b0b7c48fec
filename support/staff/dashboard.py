"""How the assistant is doing over a period, day by day, for the staff dashboard (a selector: reads only).

Everything is counted from what the conversations stored: each turn's trace,
the model calls' usage, the conversations' handoffs and ratings. Days are the
store's local days (TIME_ZONE). The model calls' usage is summed by the
database, a row a day; the traces (their latencies, for percentiles, and their
tool calls, in JSON) are read once and summed here, the same way on SQLite and
PostgreSQL: about 0.6 s for 30 days of 1,000 turns a day on PostgreSQL.
"""

import math
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta
from typing import Literal, TypedDict, cast

from django.conf import settings
from django.db.models import Count, OuterRef, Subquery, Sum
from django.db.models.functions import TruncDate
from django.utils import timezone

from orders.numbers import ORDER_NUMBERS
from orders.patterns import EMAIL_MENTION_RE, RMA_NUMBER_MENTION_RE
from support.conversations.models import Conversation, HandoffReason, ModelCall, TurnTrace
from support.insight.traces import TurnOutcome
from support.staff.selectors import trace_review_annotate

UNANSWERED_SHOWN = 50
# Other runs of digits a customer may type (a phone or card number): masked too.
_LONG_NUMBER_RE = re.compile(r"\d[\d ()./-]{5,}\d")
_TokenUsage = Literal[
    "input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens"
]
_TOKEN_PRICES: dict[_TokenUsage, str] = {
    "input_tokens": "BOOKLY_PRICE_INPUT_PER_MTOK",
    "output_tokens": "BOOKLY_PRICE_OUTPUT_PER_MTOK",
    "cache_read_input_tokens": "BOOKLY_PRICE_CACHE_READ_PER_MTOK",
    "cache_creation_input_tokens": "BOOKLY_PRICE_CACHE_WRITE_PER_MTOK",
}


class _DayUsage(TypedDict):
    """A day's model calls: how many conversations made them, and their usage summed by field."""

    day: date
    conversations: int
    input_tokens: int
    output_tokens: int
    cache_read_input_tokens: int
    cache_creation_input_tokens: int


def _share(part: int, whole: int) -> float | None:
    return part / whole if whole else None


def _percentile(values: list[int], fraction: float) -> int | None:
    """The nearest-rank percentile: the smallest value with at least `fraction` of them at or below it."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[max(0, math.ceil(fraction * len(ordered)) - 1)]


@dataclass
class Figures:
    """One day's figures, or the whole period's."""

    conversations: int = 0  # started
    assisted: int = 0  # started and answered by the assistant at least once
    resolved: int = 0  # of those, never handed to a person, and not left at a dead end by the last reply
    dead_ends: int = 0  # of those, left at a dead end by the last reply (and never handed to a person)
    handoffs: int = 0  # of those started, the ones handed to a person (asked for, or taken by staff)
    turns: int = 0
    outcomes: Counter = field(default_factory=Counter)
    tool_calls: int = 0
    tool_errors: int = 0
    returns_asked: int = 0  # initiate_return calls
    returns_before_check: int = 0  # refused: no eligibility check had passed
    latencies_ms: list[int] = field(default_factory=list)
    tokens: Counter = field(default_factory=Counter)  # by ModelCall usage field
    cost: float = 0.0  # estimated, in the currency of the price settings
    costed_conversations: int = 0  # how many conversations made the model calls that `cost` adds up
    votes_up: int = 0
    votes_down: int = 0
    ratings: list[int] = field(default_factory=list)

    def rate(self, outcome: TurnOutcome) -> float | None:
        return _share(self.outcomes[outcome], self.turns)

    @property
    def resolved_rate(self) -> float | None:
        return _share(self.resolved, self.assisted)

    @property
    def dead_end_rate(self) -> float | None:
        return _share(self.dead_ends, self.assisted)

    @property
    def handoff_rate(self) -> float | None:
        return _share(self.handoffs, self.conversations)

    @property
    def tool_error_rate(self) -> float | None:
        return _share(self.tool_errors, self.tool_calls)

    @property
    def p50_ms(self) -> int | None:
        return _percentile(self.latencies_ms, 0.5)

    @property
    def p95_ms(self) -> int | None:
        return _percentile(self.latencies_ms, 0.95)

    @property
    def thumbs_up_rate(self) -> float | None:
        return _share(self.votes_up, self.votes_up + self.votes_down)

    @property
    def average_rating(self) -> float | None:
        return sum(self.ratings) / len(self.ratings) if self.ratings else None

    @property
    def cost_per_conversation(self) -> float | None:
        return self.cost / self.costed_conversations if self.costed_conversations else None


@dataclass
class Dashboard:
    start: date
    end: date  # included
    days: dict[date, Figures]
    total: Figures
    rejections: Counter  # validator code -> replies rejected
    handoff_reasons: Counter  # HandoffReason label -> conversations
    unanswered: list[dict]  # refusals and fallbacks, newest first: at, outcome, words (masked), links


def customer_words_masked(*, text: str) -> str:
    """The customer's words without what identifies them: emails, order and RMA numbers, long numbers."""
    text = EMAIL_MENTION_RE.sub("[email]", text)
    text = ORDER_NUMBERS.replace("[order number]", text, anywhere=True)
    text = RMA_NUMBER_MENTION_RE.sub("[RMA number]", text)
    return _LONG_NUMBER_RE.sub("[number]", text)


def dashboard_get(*, start: date, end: date) -> Dashboard:
    """The figures of the days from `start` to `end` (both included)."""
    zone = timezone.get_current_timezone()
    since = datetime.combine(start, time.min, tzinfo=zone)
    until = datetime.combine(end + timedelta(days=1), time.min, tzinfo=zone)
    days = {start + timedelta(days=n): Figures() for n in range((end - start).days + 1)}
    total = Figures()

    def both(moment: datetime) -> tuple[Figures, Figures]:
        return days[timezone.localtime(moment, zone).date()], total

    rejections: Counter = Counter()
    assisted: set[int] = set()
    traces = TurnTrace.objects.filter(created_at__gte=since, created_at__lt=until).order_by()
    for at, conversation_id, outcome, total_ms, tool_calls, violations in traces.values_list(
        "created_at", "conversation_id", "outcome", "total_ms", "tool_calls", "violations"
    ):
        if outcome != TurnOutcome.ERROR:
            assisted.add(conversation_id)
        rejections.update(violations)
        for figures in both(at):
            figures.turns += 1
            figures.outcomes[outcome] += 1
            figures.latencies_ms.append(total_ms)
            for call in tool_calls:
                figures.tool_calls += 1
                figures.tool_errors += call["result"] != "ok"
                if call["tool"] == "initiate_return":
                    figures.returns_asked += 1
                    figures.returns_before_check += call["result"] == "eligibility_not_verified"

    votes = TurnTrace.objects.filter(
        voted_at__gte=since, voted_at__lt=until, helpful__isnull=False
    ).order_by()
    for voted_at, helpful in votes.values_list("voted_at", "helpful"):
        assert voted_at is not None and helpful is not None  # filtered out above
        for figures in both(voted_at):
            figures.votes_up += helpful
            figures.votes_down += not helpful

    # Conversations are counted on the day they started, with whatever became of them since.
    reasons: Counter = Counter()
    started = (
        Conversation.objects.filter(created_at__gte=since, created_at__lt=until)
        .annotate(
            # How the last reply left the customer: where the conversation ended, or stands now.
            last_dead_end=Subquery(
                TurnTrace.objects.filter(conversation=OuterRef("pk")).order_by("-turn").values("dead_end")[:1]
            )
        )
        .order_by()
    )
    for at, pk, handoff_at, reason, last_dead_end in started.values_list(
        "created_at", "pk", "handoff_at", "handoff_reason", "last_dead_end"
    ):
        if handoff_at is not None:
            # No reason: a member of staff took the conversation without being asked.
            reasons[HandoffReason(reason).label if reason else "Staff took it over"] += 1
        for figures in both(at):
            figures.conversations += 1
            figures.handoffs += handoff_at is not None
            if pk in assisted:
                figures.assisted += 1
                figures.dead_ends += handoff_at is None and bool(last_dead_end)
                figures.resolved += handoff_at is None and not last_dead_end

    rated = Conversation.objects.filter(
        rated_at__gte=since, rated_at__lt=until, rating__isnull=False
    ).order_by()
    for rated_at, rating in rated.values_list("rated_at", "rating"):
        assert rated_at is not None and rating is not None  # filtered out above
        for figures in both(rated_at):
            figures.ratings.append(rating)

    prices = {usage: getattr(settings, name) / 1_000_000 for usage, name in _TOKEN_PRICES.items()}
    # Summed by the database: a busy period has a few model calls per turn.
    calls = ModelCall.objects.filter(created_at__gte=since, created_at__lt=until, offline=False).order_by()
    by_day = calls.values(day=TruncDate("created_at", tzinfo=zone)).annotate(
        conversations=Count("conversation", distinct=True), **{name: Sum(name) for name in _TOKEN_PRICES}
    )
    # The plugin types a row by the keywords it can read: not the sums, passed as **kwargs.
    for row in cast(Iterable[_DayUsage], by_day):
        days[row["day"]].costed_conversations = row["conversations"]
        for figures in (days[row["day"]], total):
            for name in _TOKEN_PRICES:
                figures.tokens[name] += row[name]
                figures.cost += row[name] * prices[name]
    total.costed_conversations = calls.values("conversation").distinct().count()

    return Dashboard(
        start=start,
        end=end,
        days=days,
        total=total,
        rejections=rejections,
        handoff_reasons=reasons,
        unanswered=_unanswered(since, until),
    )


def _unanswered(since: datetime, until: datetime) -> list[dict]:
    traces = trace_review_annotate(
        traces=TurnTrace.objects.filter(
            created_at__gte=since,
            created_at__lt=until,
            outcome__in=[TurnOutcome.REFUSED, TurnOutcome.NO_POLICY, TurnOutcome.FALLBACK, TurnOutcome.STUCK],
        )
    ).order_by("-created_at")[:UNANSWERED_SHOWN]
    return [
        {
            "at": trace.created_at,
            "outcome": trace.get_outcome_display(),
            "dead_end": trace.dead_end,
            "words": customer_words_masked(text=trace.asked or ""),
            "conversation_id": trace.conversation_id,
            "turn": trace.turn,
        }
        for trace in traces
    ]


CSV_COLUMNS = (
    "day",
    "conversations",
    "conversations_with_assistant",
    "resolved_without_person",
    "dead_ends",
    "handoffs",
    "turns",
    *(f"turns_{outcome}" for outcome in TurnOutcome.values),
    "tool_calls",
    "tool_errors",
    "returns_asked_before_check",
    "p50_ms",
    "p95_ms",
    "input_tokens",
    "output_tokens",
    "cache_read_tokens",
    "cache_write_tokens",
    "estimated_cost",
    "helpful_votes",
    "unhelpful_votes",
    "ratings",
    "average_rating",
)


def dashboard_csv_rows(*, dashboard: Dashboard):
    """The period as CSV rows: the header, one row per day, then the period's total."""
    yield CSV_COLUMNS
    for label, figures in [
        *((day.isoformat(), f) for day, f in dashboard.days.items()),
        ("total", dashboard.total),
    ]:
        yield (
            label,
            figures.conversations,
            figures.assisted,
            figures.resolved,
            figures.dead_ends,
            figures.handoffs,
            figures.turns,
            *(figures.outcomes[outcome] for outcome in TurnOutcome.values),
            figures.tool_calls,
            figures.tool_errors,
            figures.returns_before_check,
            "" if figures.p50_ms is None else figures.p50_ms,
            "" if figures.p95_ms is None else figures.p95_ms,
            *(figures.tokens[name] for name in _TOKEN_PRICES),
            f"{figures.cost:.4f}",
            figures.votes_up,
            figures.votes_down,
            len(figures.ratings),
            "" if figures.average_rating is None else f"{figures.average_rating:.2f}",
        )
