from typing import Any

from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandParser

from orders.models import Order
from policies.models import PolicyEntry


class Command(BaseCommand):
    help = (
        "Load the demo fixture, only into an empty store (no orders and no FAQ entries). "
        "Safe to run on every start: a store with data is left as it is."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--fixture", default="demo", help="Fixture name in fixtures/ (default: demo).")

    def handle(self, *args: Any, fixture: str, **options: Any) -> None:
        # Asked of the database itself, not read from another command's output.
        if Order.objects.exists() or PolicyEntry.objects.exists():
            self.stdout.write("The store has data already; the demo was not loaded.")
            return
        call_command("loaddata", fixture, verbosity=0)
        self.stdout.write(
            f"Loaded the demo: {Order.objects.count()} orders and {PolicyEntry.objects.count()} FAQ entries."
        )
