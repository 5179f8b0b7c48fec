"""The questions the assistant did not answer, grouped by similarity, for staff to cover in the FAQ (a
selector: reads only).

A turn is unanswered when it ended in a refusal, a "no policy" answer, the validator's fallback, being
stuck or a handover (its TurnTrace's outcome), or when the reply offered a person (as the built-in model
records it: the reply's state waits for the customer's yes to that offer); the handover that a yes to
such an offer makes is not listed again. What the customer wrote is
read masked (customer_words_masked), the newest MAX_QUESTIONS of the period at most.

Grouping: each question is a TF-IDF vector of its words and of its letters' n-grams (which survive
typos: "refund" and "refnud" share most), compared by cosine similarity. Newest first, a question joins
the group it is most similar to on average when that is at least SIMILAR, or starts a group. The same
questions give the same groups, in the same order.
"""

import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, cast

from django.db.models import Exists, OuterRef, Q, QuerySet
from django.utils import timezone

from support.assistant.understanding.wording import Waiting
from support.conversations.models import ConversationMessage, MessageRole, TurnTrace
from support.insight.traces import TurnOutcome
from support.staff.dashboard import customer_words_masked
from support.staff.selectors import TraceWords, trace_review_annotate

if TYPE_CHECKING:
    from django_stubs_ext import WithAnnotations
    from numpy.typing import NDArray

MAX_QUESTIONS = 2000  # the newest of the period: bounded work, whatever the traffic
SIMILAR = 0.3  # cosine similarity, on average with the group's questions, to join it
EXAMPLES_SHOWN = 5
_WORD_RE = re.compile(r"\w+")
# Words of most questions to a bookstore, or of none in particular: they make no two questions alike.
_COMMON_HERE = frozenset(
    {
        *("order", "orders", "ordered", "book", "books", "bookly", "store", "shop"),
        *("please", "pls", "want", "need", "help", "hi", "hello", "hey", "thanks", "thank"),
        *("question", "know", "tell", "ok", "okay"),
    }
)
UNANSWERED_OUTCOMES = (
    TurnOutcome.REFUSED,
    TurnOutcome.NO_POLICY,
    TurnOutcome.FALLBACK,
    TurnOutcome.STUCK,
    TurnOutcome.HANDED_OFF,
)
# What a reply that offers a person waits for, as the built-in model records it.
OFFERED_PERSON = (Waiting.OFFER_PERSON.value, Waiting.PASS_ON.value)


class _ListedWords(TraceWords):
    offered: bool  # the reply offered a person


@dataclass(frozen=True)
class Question:
    words: str  # masked
    at: datetime
    outcome: str  # its label
    offered_person: bool  # the reply offered a person (or the turn handed over to one)
    conversation_id: int
    turn: int


@dataclass
class QuestionGroup:
    questions: list[Question] = field(default_factory=list)  # newest first

    @property
    def count(self) -> int:
        return len(self.questions)

    @property
    def newest_at(self) -> datetime:
        return self.questions[0].at

    @property
    def examples(self) -> list[Question]:
        return self.questions[:EXAMPLES_SHOWN]

    @property
    def more(self) -> int:
        return max(0, self.count - EXAMPLES_SHOWN)

    @property
    def wordings(self) -> list[str]:
        """Each wording once (ignoring case), newest first."""
        seen: set[str] = set()
        found = []
        for question in self.questions:
            if question.words.casefold() not in seen:
                seen.add(question.words.casefold())
                found.append(question.words)
        return found


def unanswered_questions(*, since: datetime, until: datetime | None = None) -> list[Question]:
    """The unanswered questions asked from `since` (to `until`), newest first, at most MAX_QUESTIONS."""
    offered = ConversationMessage.objects.filter(
        conversation=OuterRef("conversation"),
        turn=OuterRef("turn"),
        role=MessageRole.ASSISTANT,
        model_state__waiting_for__in=OFFERED_PERSON,
    )
    # A yes to that offer hands over, but asks nothing: the question is the turn before's.
    yes_to_offer = ConversationMessage.objects.filter(
        conversation=OuterRef("conversation"),
        turn=OuterRef("turn") - 1,
        role=MessageRole.ASSISTANT,
        model_state__waiting_for__in=OFFERED_PERSON,
    )
    traces = TurnTrace.objects.filter(created_at__gte=since).exclude(
        Q(outcome=TurnOutcome.HANDED_OFF) & Exists(yes_to_offer)
    )
    if until is not None:
        traces = traces.filter(created_at__lt=until)
    # The plugin types trace_review_annotate's traces with its own annotations only, not `offered`.
    traces = cast(
        "QuerySet[WithAnnotations[TurnTrace, _ListedWords]]",
        trace_review_annotate(traces=traces.annotate(offered=Exists(offered)))
        .filter(Q(outcome__in=UNANSWERED_OUTCOMES) | Q(offered=True))
        .order_by("-created_at", "-pk"),
    )
    found = []
    for trace in traces[:MAX_QUESTIONS]:
        words = customer_words_masked(text=trace.asked or "").strip()
        if words:
            found.append(
                Question(
                    words=words,
                    at=trace.created_at,
                    outcome=trace.get_outcome_display(),
                    offered_person=trace.offered
                    or trace.outcome == TurnOutcome.HANDED_OFF
                    or (trace.outcome in (TurnOutcome.REFUSED, TurnOutcome.NO_POLICY) and not trace.dead_end),
                    conversation_id=trace.conversation_id,
                    turn=trace.turn,
                )
            )
    return found


def questions_grouped(*, questions: list[Question], similar: float = SIMILAR) -> list[QuestionGroup]:
    """`questions` (newest first) in groups of similar wording, the group with the newest question first."""
    if not questions:
        return []
    # Imported here: every manage.py command imports this module (through admin), few group questions.
    import numpy as np

    texts = [question.words.casefold() for question in questions]
    similarity = _similarity(texts)
    groups: list[QuestionGroup] = []
    labels = np.zeros(len(questions), dtype=int)
    for index, question in enumerate(questions):
        # Floats, being weighted: numpy's stubs type any bincount as integers.
        averages = cast(
            "NDArray[np.float64]",
            np.bincount(labels[:index], weights=similarity[index, :index], minlength=len(groups)),
        )
        if groups:
            averages /= np.array([group.count for group in groups])
        best = int(np.argmax(averages)) if groups else 0
        if not groups or averages[best] < similar:
            groups.append(QuestionGroup())
            best = len(groups) - 1
        groups[best].questions.append(question)
        labels[index] = best
    return groups


def _similarity(texts: list[str]):
    """The cosine similarity of every two texts, of their words and of their letters, each counting
    half; the most common English words ("can", "you", "my") and a bookstore's ("order", "book") left
    out of both."""
    # Imported here: scikit-learn takes a second to load, which only this page needs.
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS, TfidfVectorizer

    common = ENGLISH_STOP_WORDS | _COMMON_HERE
    words = [[word for word in _WORD_RE.findall(text) if word not in common] for text in texts]
    contents = [" ".join(kept) if kept else text for kept, text in zip(words, texts, strict=True)]
    parts = [
        TfidfVectorizer(analyzer=analyzer, ngram_range=ngrams, sublinear_tf=True).fit_transform(contents)
        for analyzer, ngrams in (("word", (1, 1)), ("char_wb", (3, 5)))
    ]
    return sum((part @ part.T).toarray() for part in parts) / len(parts)


def unanswered_question_groups(*, days: int, now: datetime | None = None) -> list[QuestionGroup]:
    """The questions of the last `days` days nobody answered, grouped by similar wording, newest first."""
    now = now or timezone.now()
    return questions_grouped(questions=unanswered_questions(since=now - timedelta(days=days)))
