from datetime import timedelta
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandParser
from django.utils import timezone

from connection.deliveries import events_purge
from connection.shop_events import shop_events_purge


class Command(BaseCommand):
    help = (
        "Delete the events (and their webhook deliveries) and what shop platforms sent older than the "
        "retention period, once done with."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--days",
            type=int,
            default=settings.BOOKLY_EVENT_RETENTION_DAYS,
            help="Keep events that occurred within this many days (default: the retention setting).",
        )

    def handle(self, *args: Any, days: int, **options: Any) -> None:
        older_than = timezone.now() - timedelta(days=days)
        deleted = events_purge(older_than=older_than)
        received = shop_events_purge(older_than=older_than)
        self.stdout.write(
            f"Deleted {deleted} event(s) older than {days} days, with their webhook deliveries; events "
            "not yet dispatched or with a delivery still being tried are kept. Deleted "
            f"{received} shop event(s) applied; those still pending are kept."
        )
