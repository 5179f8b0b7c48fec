"""Whether what staff write in the FAQ is what customers get answered: the FAQ evaluation (issue 37).

support/evals/faq/topics.json is a bookstore's FAQ as staff would write it in admin: the seven topics
issue 37 names (payment methods, receipts and invoices, the customer account, the newsletter, reviews
and feedback, placing an order, the cancellation fee) and three more a bookstore has (gift cards, gift
wrapping, pre-orders), each with a title, the answer and five or six example questions.
support/evals/faq/heldout.json holds customer messages written without reading how the built-in model
matches messages: {"text", "topic"} for 30+ a topic and for the demo's own topics (shipping, returns,
password reset), and {"text", "route"} for messages no FAQ topic may answer (an order's own request, a
person asked for, off-topic), labelled with the routing evaluation's routes. heldout_second.json holds
about 30 more for each of the seven topics, written later by another author who read only the topics' texts
(never the code), to tell how far the reader was fitted to the first set; heldout_third.json about 30
more each by a third (first-message chat logs: backstories, non-native English, letters, fragments), first
run once the reader was settled. Where another topic's answer answers a message too ("can I cancel my
pre-order for free?" is answered by both the cancellation fee and pre-orders), its "also" names it: judged by
someone who read each message against every topic's text, never the matcher or its results.

Each message is a conversation's first, taken where the model takes it as the routing evaluation reads
it (support.evals.routing), with the topics installed beside the demo's. What the customer got is read
from the model's actions where they say it (the topic looked up, the tool called) and otherwise from the
fixed sentences the assistant and any model share (the refusal, "no policy", the offer of a person);
OUTCOMES lists what it can be.
"""

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from django.db import transaction

from policies.models import PolicyEntry
from support.assistant.claims.results import ToolResult
from support.assistant.prompts import return_policy_terms
from support.assistant.understanding.wording import WHICH_TOPIC_LEAD
from support.assistant.validator import is_no_policy, is_refusal, reply_validate
from support.evals.routing import (
    IN_SCOPE,
    RoutingReport,
    message_first_answer,
    route_policy_topic,
    routing_evaluate,
)
from support.llm.protocol import OFFERS_PERSON_RE, policy_quote
from support.llm.types import Model

FAQ_SET = Path(__file__).with_name("faq")
# The topics issue 37 measured, and the demo's own.
ISSUE_TOPICS = (
    "payment_methods",
    "receipts_invoices",
    "customer_account",
    "newsletter",
    "reviews_feedback",
    "placing_order",
    "cancellation_fee",
)
DEMO_TOPICS = ("shipping", "returns_overview", "password_reset")
# What a customer got, in the order the report prints them.
OUTCOMES = (
    "served",  # lookup_policy for the labelled topic
    "served_also",  # lookup_policy for another topic whose answer answers it too (the case's "also")
    "replaced",  # lookup_policy for a topic that answers it, whose answer the validator replaced
    "wrong_topic",  # lookup_policy for another topic
    "refused",  # the refusal, or "no policy on that", with no person offered
    "asked_which",  # a question back (the built-in model's which-policy question among them)
    "offered_person",  # a refusal or "no policy" with the offer of a person, or the offer alone
    "handover",  # the handoff tool
    "other_route",  # an order's tool, or a fixed reply (a greeting, "no order number")
    "other",  # words that are none of these
)
_NOT_FAQ_ROUTES = frozenset(IN_SCOPE) - {"person"}


# What a customer read the FAQ's answer in.
SERVED = frozenset({"served", "served_also"})


def faq_outcome(*, route: str, said: str, topic: str, also: tuple[str, ...] = ()) -> str:
    """What a customer asking about `topic` got, from the route and last words of the first answer;
    `also` are other topics whose answers answer the question too."""
    looked_up = route_policy_topic(route)
    if looked_up is not None:
        if looked_up == topic:
            return "served"
        return "served_also" if looked_up in also else "wrong_topic"
    if route == "person":
        return "handover"
    if route in _NOT_FAQ_ROUTES or route.startswith("tool:"):
        return "other_route"
    if said.startswith(WHICH_TOPIC_LEAD):
        return "asked_which"  # the topics it may be about, a person offered for anything else
    if is_refusal(said) or is_no_policy(said):
        return "offered_person" if OFFERS_PERSON_RE.search(said) else "refused"
    if OFFERS_PERSON_RE.search(said):
        return "offered_person"
    return "asked_which" if said.rstrip().endswith("?") else "other"


@dataclass
class FaqReport:
    outcomes: dict[str, Counter] = field(default_factory=dict)  # by topic
    by_set: dict[str, Counter] = field(default_factory=dict)  # the seven topics' "served" and "asked"
    misses: list[tuple[str, str, str, str]] = field(default_factory=list)  # text, topic, outcome, route
    negatives: RoutingReport | None = None

    def served(self, topics) -> float:
        counts = [self.outcomes[topic] for topic in topics if topic in self.outcomes]
        total = sum(sum(counter.values()) for counter in counts)
        return sum(counter[outcome] for counter in counts for outcome in SERVED) / total if total else 1.0

    def negatives_right(self) -> float:
        return self.negatives.share(self.negatives.total) if self.negatives else 1.0

    def figures(self) -> dict[str, float]:
        """The figures issue 37's targets are set for."""
        new_topics = [topic for topic in self.outcomes if topic not in DEMO_TOPICS]
        return {
            "issue's seven topics, served": self.served(ISSUE_TOPICS),
            "all new topics, served": self.served(new_topics),
            "demo topics, served": self.served(DEMO_TOPICS),
            "not for the FAQ, routed right": self.negatives_right(),
        }


def faq_evaluate(*, model: Model, system: list[dict], cases: list[dict]) -> FaqReport:
    """Each case's first answer: {"text", "topic"} classified by OUTCOMES, {"text", "route"} by the
    routing evaluation (the share whose route is the label)."""
    report = FaqReport()
    for case in cases:
        if "topic" not in case:
            continue
        route, said = message_first_answer(model=model, text=case["text"], system=system)
        outcome = faq_outcome(route=route, said=said, topic=case["topic"], also=tuple(case.get("also", ())))
        looked_up = route_policy_topic(route)
        # A served outcome always looked a topic up (faq_outcome): `is not None` only narrows it.
        if (
            outcome in SERVED
            and looked_up is not None
            and not _quote_passes(topic=looked_up, text=case["text"], system=system)
        ):
            outcome = "replaced"  # the route was right, and the customer read the fallback
        report.outcomes.setdefault(case["topic"], Counter())[outcome] += 1
        if case["topic"] in ISSUE_TOPICS:
            counts = report.by_set.setdefault(case.get("set", ""), Counter())
            counts["asked"] += 1
            counts["served"] += outcome in SERVED
        if outcome not in SERVED:
            report.misses.append((case["text"], case["topic"], outcome, route))
    negatives = [case for case in cases if "route" in case]
    report.negatives = routing_evaluate(model=model, system=system, cases=negatives) if negatives else None
    return report


def _quote_passes(*, topic: str, text: str, system: list[dict]) -> bool:
    """Whether the validator passes the topic's answer as the customer would read it (its title, then its
    text): what the route alone cannot tell."""
    entry = PolicyEntry.objects.get(topic=topic, is_published=True)
    looked_up = {"topic": entry.topic, "title": entry.title, "text": entry.text}
    verdict = reply_validate(
        reply=policy_quote(title=entry.title, text=entry.text),
        customer_message=text,
        customer_words=[text],
        tool_results=[ToolResult("lookup_policy", json.dumps(looked_up), {"topic": topic})],
        instructions=return_policy_terms(),
        system_prompt=system[0]["text"],
    )
    return verdict.ok


def faq_topics() -> list[dict]:
    """The FAQ topics staff would write ({"topic", "title", "text", "example_questions"})."""
    return json.loads((FAQ_SET / "topics.json").read_text())


HELDOUT_SETS = ("heldout.json", "heldout_second.json", "heldout_third.json")


def faq_heldout() -> list[dict]:
    """The held-out customer messages, each labelled with a topic or a route, and with its set's name."""
    return [
        {**case, "set": name} for name in HELDOUT_SETS for case in json.loads((FAQ_SET / name).read_text())
    ]


def faq_topics_install(*, topics: list[dict]) -> None:
    """Publish the topics beside those there, each checked as admin checks it."""
    with transaction.atomic():
        for fields in topics:
            entry = PolicyEntry(is_published=True, **fields)
            entry.full_clean()
            entry.save()
