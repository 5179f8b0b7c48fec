"""Guard layer 4: a deterministic check of every final reply before it leaves the server.

It assumes the prompt, the reminders and the model all failed, and checks:
- claims: what each sentence says about an order (status, dates, amounts,
  tracking number, titles, RMA, return eligibility) matches the latest
  successful tool results for that very order (support.assistant.claims);
- grounding: every order number, ISO date, RMA number and dollar amount in
  the reply appears in this conversation's tool results or in the customer's
  own words (any earlier turn counts: follow-ups are normal);
- conduct (support.assistant.conduct), by allow-list on the normalised reply:
  no link, domain, email address or phone number, no promise (a refund
  confirmed, a replacement, a credit, a code, an exception) and no request for
  a payment credential that this turn's tool results did not give; never
  speaking as a person; no return policy of its own making; none of the
  system prompt's or reminders' prose; no sentence about something else
  entirely; nothing internal (our tags and names, content parts, entities,
  markup);
- no markdown;
- no engagement outside the three tasks: a reply that says nothing about
  orders, returns or store policies must be the refusal sentence.
"""

import re
from dataclasses import dataclass

from orders.numbers import ORDER_MENTION, ORDER_NUMBERS, numbered_re
from orders.patterns import (
    AMOUNT_MENTION_RE,
    ISO_DATE_MENTION_RE,
    RMA_NUMBER_MENTION_RE,
    amount_mention_number,
)
from support.assistant.claims import (
    ToolResult,
    claim_violations,
    knowledge_of,
    mentions_order_facts,
    quotes_policy,
)
from support.assistant.claims.checking import order_in_focus
from support.assistant.claims.meaning import meaning_violations
from support.assistant.conduct import REFUSAL_RE, conduct_violations, emails_vouched_for, normalised


def _whole(match: re.Match) -> str:
    return match.group(0)


def _order_number_written(match: re.Match) -> str:
    """An order number as a reply wrote it; after "order" without its prefix, its digits."""
    return match.groupdict().get("digits") or match.group(0)


FALLBACK_REPLY = (
    "Sorry, I couldn't put together a reliable answer to that. I can help with the status of an order, "
    "a return, or our store policies. Could you rephrase your question?"
)

# (violation code, its pattern now, what of a match is the value: the whole of it or an amount's number)
_IDENTIFIER_PATTERNS = (
    ("ungrounded_order_number", lambda: ORDER_NUMBERS.look_alike_re, _order_number_written),
    ("ungrounded_date", lambda: ISO_DATE_MENTION_RE, _whole),
    ("ungrounded_rma_number", lambda: RMA_NUMBER_MENTION_RE, _whole),
    ("ungrounded_amount", lambda: AMOUNT_MENTION_RE, amount_mention_number),
)

_MARKDOWN_PATTERNS = [
    re.compile(r"\*\*[^*\n]+\*\*"),  # bold
    re.compile(r"__[^_\n]+__"),  # bold
    re.compile(r"(?<![\w*])\*[^*\s][^*\n]*\*(?![\w*])"),  # italics
    re.compile(r"(?<!\w)_[^_\s][^_\n]*_(?!\w)"),  # italics (not snake_case)
    re.compile(r"^\s{0,3}#{1,6}\s", re.MULTILINE),  # headers
    re.compile(r"^\s*[-*+•]\s+\S", re.MULTILINE),  # bullets
    re.compile(r"^\s*\d+[.)]\s+\S", re.MULTILINE),  # numbered lists
    re.compile(r"\[[^\]\n]+\]\([^)\n]+\)"),  # links
    re.compile(r"`"),  # code
    re.compile(r"^\s*>\s", re.MULTILINE),  # quotes
    re.compile(r"^\s*\|.*\|\s*$", re.MULTILINE),  # tables
]


# Words that show a reply is about one of the three tasks.
_SCOPE_WORDS = numbered_re(
    r"\b(order|orders|ordered|return|returns|returned|returning|refund|refunds|refunded|rma|ship|"
    r"shipping|shipped|delivery|delivered|deliver|tracking|track|parcel|package|policy|policies|faq|"
    r"password|account|email|items?|exchange|purchase|bookly|arrived|arrive|transit|on its way|processing|"
    r"prepared|cancell?ed|cancel|cancellation|address|eligible|returnable|cost|costs|total|price|paid|"
    r"support team|discounts?|coupons?|promo codes?|vouchers?)\b|" + ORDER_MENTION,
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Verdict:
    violations: tuple[str, ...]

    @property
    def ok(self) -> bool:
        return not self.violations


def _normalize(text: str) -> str:
    return re.sub(r"[\s-]", "", text).casefold()


def reply_validate(
    *,
    reply: str,
    customer_message: str,
    customer_words: list[str],
    tool_results: list[ToolResult],
    instructions: str = "",
    turn_results: list[ToolResult] | None = None,
    system_prompt: str = "",
) -> Verdict:
    """Check one final reply to `customer_message`, given everything the customer wrote, every
    tool result of the conversation so far (oldest first), the return policy's terms as the system
    prompt states them (`instructions`: they may be stated without a tool), the tool results of this
    turn (what alone grounds a link, a phone number or a promise; all of them when not given) and
    the whole system prompt (whose own prose a reply must not repeat)."""
    violations: list[str] = []
    if not reply.strip():
        return Verdict(("empty_reply",))
    # The conduct rules read the raw reply (its entities and markup are violations of their own); the
    # identifiers are read as the customer sees them: a fullwidth order number is the plain one.
    shown = normalised(reply)

    corpus = _normalize("\n".join([*customer_words, *(result.content for result in tool_results)]))
    for code, pattern, value_of in _IDENTIFIER_PATTERNS:
        for match in pattern().finditer(shown):
            value = value_of(match)
            if _normalize(value.replace(",", "")) not in corpus.replace(",", ""):
                violations.append(code)
                break

    knowledge = knowledge_of(tool_results, instructions=instructions)
    focus = order_in_focus(customer_message, knowledge)
    for code in [
        *claim_violations(reply=reply, customer_message=customer_message, knowledge=knowledge),
        *meaning_violations(reply=reply, knowledge=knowledge, focus=focus),
    ]:
        if code not in violations:
            violations.append(code)

    this_turn = tool_results if turn_results is None else turn_results
    for code in conduct_violations(
        reply=reply,
        grounding="\n".join(result.content for result in this_turn),
        terms=instructions,
        system_prompt=system_prompt,
        knowledge=knowledge,
        vouched_emails=emails_vouched_for(this_turn),
    ):
        if code not in violations:
            violations.append(code)

    if any(pattern.search(reply) for pattern in _MARKDOWN_PATTERNS):
        violations.append("markdown")

    refusal = REFUSAL_RE.search(reply)
    if refusal:
        rest = (reply[: refusal.start()] + reply[refusal.end() :]).strip()
        if rest and not _SCOPE_WORDS().search(rest):
            violations.append("off_topic_after_refusal")
    elif not (
        _SCOPE_WORDS().search(reply)
        or mentions_order_facts(reply, knowledge)
        or quotes_policy(reply, knowledge)
        or (_is_pleasantry(customer_message) and _is_pleasantry(reply))
    ):
        violations.append("off_topic")
    return Verdict(tuple(violations))


# "I don't have a store policy on that": the honest answer to a store question no FAQ topic covers.
_NO_POLICY_RE = re.compile(
    r"\b(?:don't|do not|doesn't)\s+have\s+(?:a|any)\s+(?:store\s+|published\s+)?polic(?:y|ies)\s+"
    r"(?:on|for|about)\b"
    r"|\bno\s+(?:store\s+|published\s+)?polic(?:y|ies)\s+(?:on|for|about)\b",
    re.IGNORECASE,
)


def is_no_policy(reply: str) -> bool:
    """Whether the reply says the store has no policy on what was asked."""
    return _NO_POLICY_RE.search(reply) is not None


def is_refusal(reply: str) -> bool:
    """Whether the reply is (or holds) the one refusal sentence."""
    return REFUSAL_RE.search(reply) is not None


_PLEASANTRY_RE = re.compile(
    r"^(hi|hello|hey|good (morning|afternoon|evening)|you'?re welcome|my pleasure|glad|happy|thanks|"
    r"thank you|goodbye|bye|take care|have a (great|good|nice))\b",
    re.IGNORECASE,
)


def _is_pleasantry(text: str) -> bool:
    """A short greeting, thanks or goodbye. Answered in kind, it needs no task words."""
    return len(text) <= 160 and bool(_PLEASANTRY_RE.match(text.strip()))
