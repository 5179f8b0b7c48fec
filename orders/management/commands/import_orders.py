from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from orders.imports import ImportFileInvalid, orders_import, records_from_csv, records_from_jsonl
from orders.shops import ShopNotSaid, shop_named

_READERS = {"csv": records_from_csv, "jsonl": records_from_jsonl}
_FORMATS = {".csv": "csv", ".jsonl": "jsonl", ".ndjson": "jsonl"}


class Command(BaseCommand):
    help = (
        "Import the shop's orders from a CSV file (one row per item) or a JSON Lines file (one order per "
        "line): new orders are created, known ones replaced by what the file says, refused ones listed with "
        "their line and every problem. Importing the same file again changes nothing."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", type=Path)
        parser.add_argument("--format", choices=sorted(_READERS), help="Default: from the file's extension.")
        parser.add_argument("--dry-run", action="store_true", help="Check and count, change nothing.")
        parser.add_argument(
            "--shop",
            help="The name of the shop whose orders these are (admin: Shops); needed when there are several.",
        )

    def handle(
        self, *args: Any, file: Path, format: str | None, dry_run: bool, shop: str | None, **options: Any
    ) -> None:
        try:
            into = shop_named(name=shop)
        except ShopNotSaid as unsaid:
            raise CommandError(str(unsaid)) from None
        format = format or _FORMATS.get(file.suffix.lower())
        if format is None:
            raise CommandError("Say --format csv or --format jsonl: the file's extension does not tell.")
        try:
            with file.open(encoding="utf-8-sig", newline="") as lines:
                summary = orders_import(records=_READERS[format](lines), shop=into, dry_run=dry_run)
        except OSError as error:
            raise CommandError(f"Cannot read {file}: {error.strerror}.") from None
        except UnicodeDecodeError:
            raise CommandError(f"{file} is not UTF-8 text.") from None
        except ImportFileInvalid as invalid:
            raise CommandError(str(invalid)) from None
        would = "Would have created" if dry_run else "Created"
        self.stdout.write(
            f"{would} {summary.created}, updated {summary.updated}, left {summary.unchanged} unchanged, "
            f"refused {summary.refused_count}."
        )
        for record in summary.refused:
            problems = "; ".join(f"{p['field']} {p['problem']}" for p in record.problems)
            self.stdout.write(
                f"  line {record.line}{f' ({record.number})' if record.number else ''}: {problems}"
            )
        if summary.refused_count > len(summary.refused):
            self.stdout.write(f"  … and {summary.refused_count - len(summary.refused)} more refused.")
        if summary.stopped:
            done = "nothing was changed (dry run)" if dry_run else "the orders before it were imported"
            raise CommandError(f"Stopped: {summary.stopped}; {done}.")
        if summary.refused_count:
            rest = "nothing was changed (dry run)" if dry_run else "the others were imported"
            raise CommandError(f"{summary.refused_count} orders were refused; {rest}.")
