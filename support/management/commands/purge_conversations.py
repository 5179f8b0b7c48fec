from django.conf import settings
from django.core.management.base import BaseCommand

from support.conversations.services import conversations_purge


class Command(BaseCommand):
    help = "Delete chat conversations (and their messages) older than the retention period."

    def add_arguments(self, parser):
        parser.add_argument(
            "--days",
            type=int,
            default=settings.BOOKLY_CONVERSATION_RETENTION_DAYS,
            help="Keep conversations active within this many days (default: the retention setting).",
        )

    def handle(self, *args, days, **options):
        deleted = conversations_purge(older_than_days=days)
        self.stdout.write(f"Deleted {deleted} conversation(s) idle for more than {days} days.")
