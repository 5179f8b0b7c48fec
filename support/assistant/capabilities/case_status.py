"""News of a delivery problem already reported: the cases of an order (what went wrong, with which books,
the day it was reported) and, for each, whether staff are still on it or resolved it (what they did is
in the email they sent, never repeated in the chat, where no tool result vouches for their free text).
Asking is never a second report, and never a handover to a person by itself."""

import re
from typing import Any

from django.utils import timezone

from orders.models import CaseStatus, DeliveryCase, DeliveryProblem
from support.assistant.capabilities.arguments import OrderArguments
from support.assistant.capabilities.base import (
    Capability,
    OrderTask,
    Tool,
    ToolContext,
    ToolOutcome,
    titles_joined,
    verified_order,
)


def _case_of(case: DeliveryCase) -> dict[str, Any]:
    return {
        "case_number": case.pk,
        "problem": case.problem,
        "items": [item.title for item in case.items.all()],
        # The store's day (DJANGO_TIME_ZONE), as its emails and staff's pages say it.
        "reported_on": timezone.localdate(case.created_at).isoformat(),
        "status": case.status,
        # What staff did is emailed to the customer in their words, never repeated here: free text no
        # tool checks (an amount, another order's number, "I'm Tom") would have the reply replaced.
        **(
            {"resolved_on": timezone.localdate(case.resolved_at).isoformat()}
            if case.status == CaseStatus.RESOLVED and case.resolved_at
            else {}
        ),
    }


def _case_sentence(order_id: str, case: dict[str, Any]) -> str:
    """ "Case 7 for order BK-10042 (a damaged book: Dune), reported on 2026-04-10, is open: …" """
    what = DeliveryProblem(case["problem"]).label.lower()
    if case["items"]:
        what += f": {titles_joined(case['items'])}"
    said = f"Case {case['case_number']} for order {order_id} ({what}), reported on {case['reported_on']},"
    if case["status"] != CaseStatus.RESOLVED:
        return f"{said} is open: our team is looking into it and will email you what they do about it."
    return (
        f"{said} was resolved on {case['resolved_on']}: our team emailed you what they did about it that "
        "day, to the email address on the order."
    )


def lookup_delivery_cases(args: OrderArguments, context: ToolContext) -> ToolOutcome:
    order = verified_order(args, context)
    if isinstance(order, ToolOutcome):
        return order
    cases = [
        _case_of(case) for case in order.delivery_cases.prefetch_related("items").order_by("created_at", "pk")
    ]
    told = (
        " ".join(_case_sentence(order.number, case) for case in cases)
        if cases
        else f"No delivery problem has been reported for order {order.number}. If something went wrong with "
        "its delivery, tell me what happened and I'll report it to our team."
    )
    return ToolOutcome({"order_id": order.number, "cases": cases, "tell_the_customer": told})


CAPABILITY = Capability(
    name="case_status",
    scope="news of a delivery problem already reported (lookup_delivery_cases)",
    route="case_status",
    tools=(
        Tool(
            name="lookup_delivery_cases",
            description=(
                "The delivery problems already reported on an order (cases): each one's problem, books, "
                "day reported, and whether staff resolved it (what they did is emailed). For 'any news on "
                "my case?', 'what happened with the damaged book I reported?'. Say only what "
                "tell_the_customer says."
            ),
            arguments=OrderArguments,
            handler=lookup_delivery_cases,
            progress=("Looking up the problems reported on order {order}…", "Looking up your case…"),
        ),
    ),
    prompt=(
        "- lookup_delivery_cases: for news of a problem already reported, never a second report; say "
        "tell_the_customer."
    ),
    order_tasks=(
        OrderTask(
            kind="case_status",
            # News of a report made before: "any news on case 7?", "what happened with the problem I
            # reported?", "has my case been resolved?". Never a case that is a box ("the case was
            # crushed"), "in that case", nor a report followed by a request of its own ("I reported it
            # late, now it arrived damaged", "… and now I'd like to return it", "… was I refunded?").
            asks=re.compile(
                r"\bcase (?:number |no\.? ?|#)?\d+\b|\bmy case (?:number|no\b|#)|\bopened a case\b"
                r"|\b(?:has|is|was) my case\b|\b(?:with|on|about|of) my case\b"
                r"|\b(?:i|we)(?:'ve| have| had)?(?: already| previously| just)? reported\b"
                # Looked into before, never "can you look into where it is?", a request of its own.
                r"|\b(?:did|has|have|is|are) (?:anyone|someone|you|your team|the team) (?:\w+ )?"
                r"(?:look|looked|looking) into\b"
                r"|\b(?:said|promised) (?:you(?:'d| would| will)? |to )look into\b"
                r"|\b(?:news|update|progress|word|status) (?:on|about|regarding|with|of|for) (?:my|the|that) "
                r"(?:report|claim|ticket)\b"
            ),
            unless=re.compile(
                # Told to someone else (the courier, the police): a problem told here for the first time.
                r"\breported (?:it |this |that )?to (?!(?:you|your|bookly|the store|the shop)\b)"
                r"|\breported (?:the |my )?(?:address|email|name|card)\b"
                # A request of its own after the report: a return, a refund, a problem told now.
                r"|\b(?:return|refund|refunded|reimbursed|money back|exchange|replace|replacement)\b"
                r"|\bnow (?:it|they|the|my|one|that|i|we)\b|\bbut (?:now|then|this time|also)\b"
                r"|\b(?:also|another|again|new) (?:problem|issue|book|one)\b|\bcase \d+ of\b"
            ),
            lead="I can look up the problems reported on that order.",
            tool="lookup_delivery_cases",
            read_first=True,
        ),
    ),
    replies={"lookup_delivery_cases": lambda _reading, result: result["tell_the_customer"]},
)
