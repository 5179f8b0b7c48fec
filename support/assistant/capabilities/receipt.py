"""Receipts: an order's receipt (its lines, total, address and dates) emailed to the address on the
order, after the email check; never to any other address, and once an hour at most."""

import re
from datetime import timedelta

from django.template.loader import render_to_string
from django.utils import timezone

from orders.addresses import shipping_address_of
from orders.emails import customer_email_queue
from orders.models import CustomerEmail, Order
from support.assistant.capabilities.base import (
    Capability,
    OrderArguments,
    OrderTask,
    Tool,
    ToolContext,
    ToolOutcome,
    address_line,
    verified_order,
)

SUBJECT = "Your receipt for order {number}"
# A receipt asked for again within this time is not sent again: the customer's inbox is not the
# chat's to fill.
RESEND_AFTER = timedelta(hours=1)


def email_receipt(args: OrderArguments, context: ToolContext) -> ToolOutcome:
    order = verified_order(args, context)
    if isinstance(order, ToolOutcome):
        return order
    subject = SUBJECT.format(number=order.number)
    already = CustomerEmail.objects.filter(
        order=order, subject=subject, created_at__gte=timezone.now() - RESEND_AFTER
    ).exists()
    if not already:
        # Queued in the turn's transaction (a writing tool's step): sent once it commits.
        customer_email_queue(order=order, subject=subject, body=_receipt(order))
    told = (
        f"I emailed the receipt for order {order.number} to the email address on the order a moment ago; "
        "please check that inbox, and its spam folder."
        if already
        else f"I've emailed the receipt for order {order.number} to the email address on the order."
    )
    result = {
        "order_id": order.number,
        "emailed_to": "the email address on the order",
        "tell_the_customer": told,
    }
    if already:
        result["already_sent"] = True
    return ToolOutcome(result, receipt=told)


def _receipt(order: Order) -> str:
    return render_to_string(
        "support/emails/receipt.txt",
        {
            "order": order,
            "items": list(order.items.all()),
            "address": address_line(shipping_address_of(order=order)),
        },
    ).strip()


CAPABILITY = Capability(
    name="receipt",
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
            # "invoice" as typed in a hurry too ("invoise", "invooice", "invocie": the built-in model's
            # spelling reads only letters left out or swapped), never "invite" or "involve".
            asks=re.compile(
                r"\b(?:inv(?=[a-z]*o)(?=[a-z]*i)(?=[a-z]*[cs])[a-z]{3,5}|receipts?|"
                r"proof of (?:purchase|payment))\b"
            ),
            # A receipt that is wrong, or one made out otherwise, is staff's; whether a return needs one
            # is a policy question; a lost confirmation's number is no receipt asked for.
            unless=re.compile(
                r"\b(?:wrong|different|incorrect|mistake|amount|total|charged?|sales tax|tax (?:id|number)|"
                r"vat (?:id|number)|in the name of|company name|made out|bil+ing address|account page|"
                r"return (?:\w+ )?without|without (?:a|the|my) receipt|need (?:a|the|my) receipt to|"
                r"with (?:the|my) order number)\b"
            ),
            lead="I can email you a receipt for that order.",
            tool="email_receipt",
            reply=lambda result: result["tell_the_customer"],
        ),
    ),
)
