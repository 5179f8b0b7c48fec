import json
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from orders.services import return_records_delete_for_orders


class Command(BaseCommand):
    help = (
        "Delete the returns (RMAs) made on the demo fixture's orders. "
        "loaddata restores orders, FAQ and policy but never deletes rows; this is its companion."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--fixture", default="demo", help="Fixture name in fixtures/ (default: demo).")

    def handle(self, *args: Any, fixture: str, **options: Any) -> None:
        path = settings.BASE_DIR / "fixtures" / f"{fixture}.json"
        try:
            objects = json.loads(path.read_text())
        except (OSError, ValueError) as exc:
            raise CommandError(f"Cannot read fixture {path}: {exc}") from None
        numbers = [obj["fields"]["number"] for obj in objects if obj.get("model") == "orders.order"]
        deleted = return_records_delete_for_orders(order_numbers=numbers)
        self.stdout.write(f"Deleted {deleted} return(s) on the {len(numbers)} orders of fixture '{fixture}'.")
