"""What the store emails a customer about their order or return, through an outbox that loses nothing.

A change queues its email in its own transaction (customer_email_queue); once that transaction commits,
the task queue's worker sends it (orders.tasks). A mail server that is down leaves the email in the
outbox with its attempt counted and the error's class logged; the queue's schedule sends what is left
every five minutes (`manage.py send_customer_emails` does the same by hand). The texts are fixed
wording with the order's own facts, nothing else.
"""

import logging
from datetime import datetime, timedelta

from django.conf import settings
from django.core.mail import send_mail
from django.db import transaction
from django.db.models import F
from django.template.loader import render_to_string
from django.utils import timezone
from django_q.tasks import async_task

from orders.addresses import OrderAddress, shipping_address_of
from orders.models import (
    CustomerEmail,
    DeliveryCase,
    DeliveryProblem,
    Order,
    OrderChange,
    OrderChangeKind,
    ReturnRecord,
    ReturnStatus,
)
from orders.money import money_text
from orders.selectors import order_change_not_made_reason

logger = logging.getLogger(__name__)

# After this many failed attempts an email stays in the outbox for staff to see, and is not tried again.
MAX_ATTEMPTS = 10


def customer_email_queue(*, order: Order, subject: str, body: str) -> CustomerEmail | None:
    """Keep an email to the order's address; it is sent when the caller's transaction commits. None for
    an order the shop sent without an email address (a sale at the till): nobody to write to."""
    if not order.customer_email:
        return None
    email = CustomerEmail.objects.create(order=order, to=order.customer_email, subject=subject, body=body)
    transaction.on_commit(lambda: _queue(email), robust=True)
    return email


def _queue(email: CustomerEmail) -> None:
    # A queue that cannot take it now loses nothing: the email waits in the outbox for the sweep.
    async_task("orders.tasks.customer_email_send_task", email.pk, task_name=f"customer email {email.pk}")


def customer_email_send(*, email: CustomerEmail) -> bool:
    """Send one email of the outbox now; True when the mail server took it. Never raises for the
    server's failures: they are counted on the email and logged.

    The attempt is claimed first with a compare-and-set on `attempts` as read: of two senders holding
    the same copy (the send after commit and a cron run, or two cron runs), one claims it and the other
    sends nothing, so an email goes out once."""
    claimed = CustomerEmail.objects.filter(pk=email.pk, sent_at__isnull=True, attempts=email.attempts).update(
        attempts=F("attempts") + 1
    )
    if not claimed:
        return False
    try:
        send_mail(email.subject, email.body, settings.DEFAULT_FROM_EMAIL, [email.to])
    except Exception as error:  # any failure of the backend: the email stays in the outbox
        CustomerEmail.objects.filter(pk=email.pk).update(last_error=type(error).__name__[:100])
        logger.warning("customer email %s not sent (%s); kept to retry", email.pk, type(error).__name__)
        return False
    CustomerEmail.objects.filter(pk=email.pk).update(sent_at=timezone.now(), last_error="")
    return True


def customer_emails_send_pending(*, created_before: datetime | None = None) -> tuple[int, int]:
    """Send what the outbox still holds (oldest first, while under MAX_ATTEMPTS): (sent, still failing).
    With `created_before`, only emails older than that: younger ones may still be on their first send."""
    pending = CustomerEmail.objects.filter(sent_at__isnull=True, attempts__lt=MAX_ATTEMPTS)
    if created_before is not None:
        pending = pending.filter(created_at__lt=created_before)
    sent = failed = 0
    for email in pending.order_by("id"):
        if customer_email_send(email=email):
            sent += 1
        else:
            failed += 1
    return sent, failed


def _hello(order: Order) -> str:
    return f"Hello {order.customer_name},\n\n"


_SIGN_OFF = "\n\nBookly support"

# What a return's move means for the customer, by the status it moved to.
_RETURN_MOVES: dict[str, tuple[str, str]] = {
    ReturnStatus.LABEL_SENT: (
        "Your return label for {rma}",
        "Your return {rma} for order {order} is approved, and its prepaid return label is on its way to this "
        "address. Pack the items in their original packaging, attach the label and drop the parcel off.",
    ),
    ReturnStatus.RECEIVED: (
        "We received your return {rma}",
        "We received the items of your return {rma} for order {order}. The refund goes to {method} within "
        "{days} business days.",
    ),
    ReturnStatus.REFUNDED: (
        "Your refund for return {rma}",
        "Your return {rma} for order {order} is refunded to {method}.",
    ),
    ReturnStatus.REJECTED: (
        "Your return {rma} was not accepted",
        "We could not accept your return {rma} for order {order}. Our team's reason: {note}",
    ),
    ReturnStatus.CANCELLED: (
        "Your return {rma} is cancelled",
        "Your return {rma} for order {order} is cancelled. Our team's reason: {note}",
    ),
}


def return_moved_email(*, record: ReturnRecord, status: str, note: str = "") -> CustomerEmail | None:
    """The email for a return that moved to `status` (none for a status the customer need not hear of)."""
    if status not in _RETURN_MOVES:
        return None
    subject, text = _RETURN_MOVES[status]
    facts = {
        "rma": record.rma_number,
        "order": record.order.number,
        "method": record.refund_method,
        "days": record.refund_timeline_business_days,
        "note": note,
    }
    return customer_email_queue(
        order=record.order,
        subject=subject.format(**facts),
        body=_hello(record.order) + text.format(**facts) + _SIGN_OFF,
    )


def return_started_by_staff_email(*, record: ReturnRecord) -> CustomerEmail | None:
    """A return our team started for the customer (an exception beyond the policy says so)."""
    titles = ", ".join(line.order_item.title for line in record.lines.select_related("order_item"))
    exception = " Our team granted it as an exception to the return policy." if record.exception_note else ""
    return customer_email_queue(
        order=record.order,
        subject=f"Your return {record.rma_number} has started",
        body=_hello(record.order)
        + f"Our team started return {record.rma_number} for {titles} from order {record.order.number}."
        + exception
        + f" The refund goes to {record.refund_method} within {record.refund_timeline_business_days} "
        "business days after we receive the items." + _SIGN_OFF,
    )


def order_cancelled_email(*, order: Order) -> CustomerEmail | None:
    return customer_email_queue(
        order=order,
        subject=f"Your order {order.number} is cancelled",
        body=_hello(order)
        + f"Your order {order.number} is cancelled, as you asked. It will not ship."
        + _SIGN_OFF,
    )


def order_address_changed_email(*, order: Order, address: OrderAddress) -> CustomerEmail | None:
    return customer_email_queue(
        order=order,
        subject=f"Your order {order.number} ships to a new address",
        body=_hello(order) + f"Your order {order.number} will now ship to:\n{address.one_line()}" + _SIGN_OFF,
    )


_NOT_MADE_SUBJECTS = {
    OrderChangeKind.CANCELLED: "Your order {number} could not be cancelled",
    OrderChangeKind.ADDRESS_CHANGED: "The shipping address of your order {number} could not be changed",
}
# Who can help with a change the store did not make, and how to reach them.
NOT_MADE_PERSON = "A member of our team can help: reply to this email, or ask for a person in our chat."


def order_change_not_made_email(*, change: OrderChange) -> CustomerEmail | None:
    """A change the customer was told the store was asked to make, and the store (the shop that keeps
    the order) did not make: in fixed words from what Bookly knows, never the shop's own answer (staff
    read that on the change), with a person offered."""
    order = change.order
    return customer_email_queue(
        order=order,
        subject=_NOT_MADE_SUBJECTS[OrderChangeKind(change.kind)].format(number=order.number),
        body=_hello(order)
        + f"{order_change_not_made_reason(order=order, kind=OrderChangeKind(change.kind))} {NOT_MADE_PERSON}"
        + _SIGN_OFF,
    )


# What happens after a customer reports a delivery problem: said in the chat and in the email.
DELIVERY_CASE_NEXT_STEPS: dict[str, str] = {
    DeliveryProblem.NOT_ARRIVED: "Our team will check with the carrier and tell you what happens next.",
    DeliveryProblem.DAMAGED: (
        "Please keep the book and its packaging: our team may ask for a photo, and will tell you what "
        "happens next."
    ),
    DeliveryProblem.WRONG_ITEM: (
        "Please keep the book you received: our team will tell you what happens next."
    ),
    DeliveryProblem.MISSING_ITEM: "Our team will check what was packed and tell you what happens next.",
    DeliveryProblem.LATE: "Our team will look into the delay and tell you what happens next.",
}


def delivery_case_opened_email(*, case: DeliveryCase) -> CustomerEmail | None:
    order = case.order
    return customer_email_queue(
        order=order,
        subject=f"We have your report about order {order.number} (case {case.pk})",
        body=_hello(order)
        + f"We have your report about order {order.number}: {case.get_problem_display().lower()}. "
        f"Its case number is {case.pk}. {DELIVERY_CASE_NEXT_STEPS[case.problem]}" + _SIGN_OFF,
    )


def delivery_case_resolved_email(*, case: DeliveryCase) -> CustomerEmail | None:
    order = case.order
    return customer_email_queue(
        order=order,
        subject=f"About your report on order {order.number} (case {case.pk})",
        body=_hello(order)
        + f"About your report on order {order.number} ({case.get_problem_display().lower()}):\n\n"
        + case.resolution
        + _SIGN_OFF,
    )


# A receipt asked for again within this time is not sent again: the customer's inbox is not a chat's to fill.
RECEIPT_RESEND_AFTER = timedelta(hours=1)


def order_receipt_email(*, order: Order) -> tuple[CustomerEmail | None, bool]:
    """Queue the order's receipt (its lines, total, address and dates) to the address on the order, and
    only there; or, when one was queued within RECEIPT_RESEND_AFTER, that one. Returns the email and
    whether it is new. Under the order's row lock, so two requests at once queue one email."""
    subject = f"Your receipt for order {order.number}"
    with transaction.atomic():
        order = Order.objects.select_for_update().get(pk=order.pk)  # the copy read under the lock
        earlier = CustomerEmail.objects.filter(
            order=order,
            subject=subject,
            created_at__gte=timezone.now() - RECEIPT_RESEND_AFTER,
            attempts__lt=MAX_ATTEMPTS,  # one the mail server refused for good was never emailed
        ).first()
        if earlier is not None:
            return earlier, False
        address = shipping_address_of(order=order)
        body = render_to_string(
            "orders/emails/receipt.txt",
            {
                "order": order,
                "items": [
                    {
                        "quantity": item.quantity,
                        "title": item.title,
                        "author": item.author,
                        "unit_price": money_text(amount=item.unit_price, currency=order.currency),
                        "line_total": money_text(amount=item.line_total, currency=order.currency),
                    }
                    for item in order.items.all()
                ],
                "total": money_text(amount=order.total, currency=order.currency),
                "address": address.one_line() if address else "",
            },
        ).strip()
        return customer_email_queue(order=order, subject=subject, body=body), True


def order_check_code_email(*, order: Order, code: str, minutes: int) -> CustomerEmail | None:
    """A one-time code that shows the order in our chat, asked for there with this order's number and
    email once that number had too many wrong guesses from anyone (support.assistant.check_codes)."""
    return customer_email_queue(
        order=order,
        subject=f"Your code to see order {order.number} in our chat",
        body=_hello(order)
        + f"Someone asked our chat about your order {order.number} with this email address. To see the "
        f"order there, type this code in the chat within {minutes} minutes:\n\n{code}\n\nIf it was not "
        "you, ignore this email: without the code nobody sees your order, and nothing else is needed."
        + _SIGN_OFF,
    )
