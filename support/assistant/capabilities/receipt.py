"""Receipts: an order's receipt (its lines, total, address and dates) emailed to the address on the
order, after the email check; never to any other address, and once an hour at most
(orders.emails.order_receipt_email)."""

import re
from typing import Any

from orders.emails import order_receipt_email
from support.assistant.capabilities.arguments import OrderArguments
from support.assistant.capabilities.base import (
    Capability,
    OrderTask,
    Tool,
    ToolContext,
    ToolOutcome,
    verified_order,
)


def email_receipt(args: OrderArguments, context: ToolContext) -> ToolOutcome:
    order = verified_order(args, context)
    if isinstance(order, ToolOutcome):
        return order
    _, new = order_receipt_email(order=order)
    told = (
        f"I've emailed the receipt for order {order.number} to the email address on the order."
        if new
        else f"The receipt for order {order.number} was emailed to the email address on the order within the "
        "last hour; please check that inbox, and its spam folder."
    )
    result: dict[str, Any] = {
        "order_id": order.number,
        "emailed_to": "the email address on the order",
        "tell_the_customer": told,
    }
    if not new:
        result["already_sent"] = True
    return ToolOutcome(result, receipt=told)


# "Send me my receipt", "a copy of my invoice", "I need a receipt" ask for one, which the receipt
# capability sends; "is the receipt emailed?", "receipt for my purchase, how?" and "invoice with a VAT
# number possible?" ask how receipts work, which a topic may say.
_SEND_ME_RE = re.compile(
    r"\b(?:(?:re-?)?send (?:me|it|my|the|a|an|over)|forward|e-?mail (?:me|my|the|it)|mail me"
    r"|copy of (?:my|the)|(?:need|want|like) (?:a|the|my)|get me|where(?:'s| is) my|didn't get|never got"
    r"|(?:never|not|didn't|haven't|hasn't|has not|have not) (?:\w+ )?(?:received?|arrived?|come|came)"
    r"|(?:receipt|invoice) please)\b"
)


CAPABILITY = Capability(
    name="receipt",
    scope="an order's receipt or invoice (email_receipt)",
    route="receipt",
    tools=(
        Tool(
            name="email_receipt",
            description=(
                "Email the order's receipt (lines, total, address, dates) to the email address on the "
                "order, never elsewhere. Then say only tell_the_customer."
            ),
            arguments=OrderArguments,
            handler=email_receipt,
            progress=("Emailing the receipt for order {order}…", "Emailing your receipt…"),
            writes=True,
        ),
    ),
    prompt="- email_receipt: for an invoice or receipt; it goes only to the email on the order.",
    order_tasks=(
        OrderTask(
            kind="receipt",
            # "invoice" as typed in a hurry too ("invoise", "invooice", "invioce", "invocie": the built-in
            # model's spelling reads only letters left out or swapped), never "invasion" or "involve".
            asks=re.compile(r"\b(?:inv(?:[oi]{1,3}[cs]e|ocie)s?|receipts?|proof of (?:purchase|payment))\b"),
            # A receipt that is wrong, or one made out otherwise, is staff's; whether a return needs one
            # is a policy question; a lost confirmation's number is no receipt asked for. One asked for
            # at another address goes to the order's all the same, and the reply says so.
            unless=re.compile(
                r"\b(?:wrong|different|incorrect|mistake|amount|total|\w*charg\w*|sales tax|"
                r"tax (?:id|number)|vat (?:id|number)|in the name of|company name|made out|bil+ing address|"
                r"account page|"
                r"return (?:\w+ )?without|without (?:a|the|my) receipt|need (?:a|the|my) receipt to|"
                r"with (?:the|my) order number)\b"
            ),
            requested=_SEND_ME_RE,
            lead="I can email you a receipt for that order.",
            tool="email_receipt",
        ),
    ),
    replies={"email_receipt": lambda _reading, result: result["tell_the_customer"]},
)
