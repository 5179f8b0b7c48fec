"""What a reply says about an order, sentence by sentence, and whether the tools said so for that order.

Token grounding (an order number or date that appears anywhere in the
conversation) lets three kinds of invented facts through: a status for an
order no tool returned, a status the lookup did not return, and one order's
date or amount given to another. So each sentence's claims are attributed to
the order it names (or the order in focus) and checked against the latest
successful tool results for that order:
- status, in its common wordings ("on its way", "has arrived", "not shipped yet");
- dates (ISO and written out; "delivered on" must be the delivery date), amounts,
  tracking numbers, item titles, RMA numbers and a return's progress;
- return eligibility ("it can be returned", "isn't eligible", "the window has
  closed"), of the order or of a named item.
Across the reply: refund timelines and methods, and counts of days, must be
ones a tool gave. Questions, conditionals ("once it has shipped …"), policy
wording without a subject that points at the order ("ebooks cannot be
returned") and sentences quoted from the tools' own words claim nothing.
Wordings are lists, each owned by the capability it is about (`Capability.claims` in
support/assistant/capabilities/), tuned on tables of correct and invented replies
(support/tests/assistant/test_claims.py): a claim worded in a way no list knows passes.
"""

from support.assistant.claims.checking import claim_violations, mentions_order_facts, quotes_policy
from support.assistant.claims.dates import dates_removed, written_dates
from support.assistant.claims.results import Knowledge, OrderFacts, ToolResult, knowledge_of
from support.assistant.claims.text import (
    amounts_in,
    day_counts_in,
    order_number,
    refund_methods_in,
    rmas_in,
    sentences_of,
    tracking_in,
)
from support.assistant.claims.wordings import eligibility_claims, return_claims, segments_of, status_claims

__all__ = [
    "Knowledge",
    "OrderFacts",
    "ToolResult",
    "amounts_in",
    "claim_violations",
    "dates_removed",
    "day_counts_in",
    "eligibility_claims",
    "knowledge_of",
    "mentions_order_facts",
    "order_number",
    "quotes_policy",
    "refund_methods_in",
    "return_claims",
    "rmas_in",
    "segments_of",
    "sentences_of",
    "status_claims",
    "tracking_in",
    "written_dates",
]
