"""The customer emails' steps as tasks of the task queue (django-q2): what its workers run."""

from datetime import timedelta

from django.utils import timezone

from orders.emails import customer_email_send, customer_emails_send_pending
from orders.models import CustomerEmail


def customer_email_send_task(email_id: int) -> None:
    email = CustomerEmail.objects.filter(pk=email_id, sent_at__isnull=True).first()
    if email is not None:
        customer_email_send(email=email)


# An email this young may still be on its first send (the mail server has EMAIL_TIMEOUT to answer):
# the sweep leaves it, so that it is not sent twice.
FIRST_SEND_GRACE = timedelta(minutes=2)


def customer_emails_sweep_task() -> None:
    """Every five minutes (a schedule orders' migration adds): what the mail server refused before."""
    customer_emails_send_pending(created_before=timezone.now() - FIRST_SEND_GRACE)
