from typing import Any

from django.core.management.base import BaseCommand

from orders.emails import MAX_ATTEMPTS, customer_emails_send_pending


class Command(BaseCommand):
    help = (
        "Send the customer emails the outbox still holds (a mail server that was down when a return "
        f"moved or an order changed), each at most {MAX_ATTEMPTS} times in all. Run it from cron."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        sent, failed = customer_emails_send_pending()
        self.stdout.write(f"Sent {sent}; {failed} still failing.")
