"""Orders from a file the shop exported: CSV (one row per item) or JSON Lines (one order per line).

Each order goes through orders.intake like the store API's: checked whole, applied whole or refused
with its line number and every problem by field. The file is read as a stream and written in batches
(one transaction per batch, a savepoint per order), so memory stays flat and 50,000 orders take minutes.
Importing the same file again changes nothing.
"""

import csv
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from django.db import transaction

from orders.inbound import ITEM_FIELDS, ITEM_REQUIRED, ORDER_FIELDS, ORDER_REQUIRED, SHOP_ADDRESS_FIELDS
from orders.intake import OrderRefused, UpsertOutcome, incoming_order_clean, order_upsert
from orders.models import OrderSource, Shop
from orders.numbers import ORDER_NUMBERS

# The CSV's columns are the intake's fields: the order's (its address as ship_ columns), then the item's.
# The order's own columns: its address and items have theirs; its parcels and refunds are JSON only.
ORDER_COLUMNS = (
    "number",
    *(name for name in ORDER_FIELDS if name not in ("shipping_address", "items", "shipments", "refunds")),
)
ADDRESS_COLUMNS = {f"ship_{name}": name for name in SHOP_ADDRESS_FIELDS}
ITEM_COLUMNS = ITEM_FIELDS
CSV_COLUMNS = (*ORDER_COLUMNS, *ADDRESS_COLUMNS, *ITEM_COLUMNS)
REQUIRED_COLUMNS = ("number", *sorted(ORDER_REQUIRED - {"items"}), *sorted(ITEM_REQUIRED))
# A line longer than this is refused unread (a stray binary file, a field that swallowed the rest).
MAX_LINE_CHARS = 100_000
BATCH_SIZE = 500
# Of the refused orders, the first this many are kept with their problems (all are counted).
MAX_REFUSALS_KEPT = 1000


class ImportFileInvalid(Exception):
    """The file cannot be read as orders at all (its header, its format); nothing was imported."""


class ImportStopped(Exception):
    """Reading must stop at this line (the rows after it cannot be trusted); what came before stands."""

    def __init__(self, line: int, reason: str):
        super().__init__(f"line {line} {reason}")
        self.line, self.reason = line, reason


@dataclass
class ImportRecord:
    """One order as read from the file, from its first line: its number and fields, or why it cannot
    be an order."""

    line: int
    number: str
    data: dict[str, Any] | None = None  # as JSON; None for a line that is none
    problems: list[dict[str, str]] = field(default_factory=list)


@dataclass
class ImportSummary:
    created: int = 0
    updated: int = 0
    unchanged: int = 0
    refused_count: int = 0
    refused: list[ImportRecord] = field(default_factory=list)
    stopped: str = ""  # where reading had to stop, and why

    def refuse(self, record: ImportRecord) -> None:
        self.refused_count += 1
        if len(self.refused) < MAX_REFUSALS_KEPT:
            self.refused.append(record)


def _blank_to_none(value: str | None) -> str | None:
    """A cell as the intake reads it: without the spaces around it (" 24.99 " is 24.99), None when
    blank."""
    return None if value is None or value.strip() == "" else value.strip()


def _whole(value: str | None) -> object:
    """A whole number as the validator expects it; anything else as written, for it to refuse."""
    value = _blank_to_none(value)
    if value is not None and value.strip().isascii() and value.strip().isdigit() and len(value.strip()) <= 6:
        return int(value)
    return value


def _order_of_row(row: dict[str, str]) -> dict[str, Any]:
    cells = {name: _blank_to_none(row.get(name)) for name in ORDER_COLUMNS if name != "number"}
    data: dict[str, Any] = {
        name: value for name, value in cells.items() if value is not None or name == "delivered_on"
    }
    address = {theirs: row.get(column) or "" for column, theirs in ADDRESS_COLUMNS.items()}
    if any(value.strip() for value in address.values()):
        data["shipping_address"] = {
            name: value for name, value in address.items() if value or name != "country"
        }
    return data


def _item_of_row(row: dict[str, str]) -> dict[str, object]:
    item: dict[str, object] = {name: _blank_to_none(row.get(name)) for name in ITEM_COLUMNS}
    item["line_number"], item["quantity"] = _whole(row.get("line_number")), _whole(row.get("quantity"))
    return {name: value for name, value in item.items() if value is not None}


def records_from_csv(lines: Iterable[str]) -> Iterator[ImportRecord]:
    """The orders of a CSV export: a header row naming its columns (CSV_COLUMNS; the order's columns
    repeated on each of its item rows, the rows of one order together)."""
    csv.field_size_limit(MAX_LINE_CHARS)
    # strict: a quote left open is an error, not a field that quietly swallows every row after it.
    reader = csv.reader(lines, strict=True)
    try:
        header = [name.strip().lower() for name in next(reader)]
    except (StopIteration, csv.Error):
        raise ImportFileInvalid("The file has no header row of column names.") from None
    unknown = [name for name in header if name not in CSV_COLUMNS]
    missing = [name for name in REQUIRED_COLUMNS if name not in header]
    if unknown or missing or len(set(header)) != len(header):
        problems = (
            [f"unknown column {name!r}" for name in unknown[:10]]
            if all(len(name) <= 40 for name in unknown)
            else ["unknown columns"]
        )
        problems += [f"missing column {name!r}" for name in missing]
        if len(set(header)) != len(header):
            problems.append("a column is named twice")
        raise ImportFileInvalid("The header row does not fit: " + "; ".join(problems) + ".")
    current: ImportRecord | None = None
    while True:
        start = reader.line_num + 1  # a quoted field may run over several lines: the row starts here
        try:
            values = next(reader)
        except StopIteration:
            break
        except (csv.Error, UnicodeDecodeError):
            # An unclosed quote swallows the rows after it, a field past the limit or bytes that are not
            # UTF-8 leave no row to trust: the order being read is refused (it may have lost rows) and
            # reading stops there.
            if current is not None:
                current.problems.append(_row_problem(f"is followed by line {start}, which cannot be read"))
                yield current
            raise ImportStopped(start, _UNREADABLE) from None
        if not any(value.strip() for value in values):
            continue
        number = ORDER_NUMBERS.key(values[0]) if values else ""
        if len(values) != len(header):
            problem = _row_problem(
                f"line {reader.line_num} has {len(values)} values for {len(header)} columns"
            )
            if current is not None and number == current.number:
                current.problems.append(problem)  # the whole order is refused, not applied without the row
            else:
                if current is not None:
                    yield current
                current = ImportRecord(
                    line=reader.line_num, number=number, data={"items": []}, problems=[problem]
                )
            continue
        row = dict(zip(header, values, strict=True))
        number = ORDER_NUMBERS.key(row["number"])
        if current is not None and number == current.number:
            _add_row(current, row, reader.line_num)
            continue
        if current is not None:
            yield current
        data = _order_of_row(row)
        data["items"] = [_item_of_row(row)]
        current = ImportRecord(line=reader.line_num, number=number, data=data)
    if current is not None:
        yield current


_UNREADABLE = (
    f"cannot be read as CSV (an unclosed quote, a field over {MAX_LINE_CHARS:,} characters, or text that "
    "is not UTF-8)"
)


def _row_problem(problem: str) -> dict[str, str]:
    return {"field": "(row)", "problem": problem}


def _add_row(record: ImportRecord, row: dict[str, str], line: int) -> None:
    """Another item row of the order being read: its order columns must say what the first row said."""
    assert record.data is not None  # a CSV's order: read from its first row
    record.data["items"].append(_item_of_row(row))
    again = _order_of_row(row)
    names = (set(again) | set(record.data)) - {"items"}
    differing = sorted(name for name in names if again.get(name) != record.data.get(name))
    if differing:
        record.problems.append(
            {"field": differing[0], "problem": f"differs between the rows of this order (line {line})"}
        )


def records_from_jsonl(lines: Iterable[str]) -> Iterator[ImportRecord]:
    """The orders of a JSON Lines export: one order object per line, its "number" beside its fields."""
    numbered = enumerate(lines, start=1)
    line_number = 0
    while True:
        try:
            line_number, line = next(numbered)
        except StopIteration:
            return
        except UnicodeDecodeError:
            raise ImportStopped(line_number + 1, "is not UTF-8 text") from None
        if not line.strip():
            continue
        if len(line) > MAX_LINE_CHARS:
            yield ImportRecord(
                line=line_number, number="", problems=[_row_problem("is too long to be an order")]
            )
            continue
        try:
            data = json.loads(line)
        except (ValueError, RecursionError):  # RecursionError: nested deeper than the parser goes
            yield ImportRecord(line=line_number, number="", problems=[_row_problem("is not valid JSON")])
            continue
        if not isinstance(data, dict):
            yield ImportRecord(line=line_number, number="", problems=[_row_problem("is not a JSON object")])
            continue
        number = data.pop("number", None)
        yield ImportRecord(
            line=line_number, number=ORDER_NUMBERS.key(number) if isinstance(number, str) else "", data=data
        )


def orders_import(*, records: Iterable[ImportRecord], shop: Shop, dry_run: bool = False) -> ImportSummary:
    """Apply the orders read from a file to `shop`'s, a batch per transaction; with `dry_run`, the same
    work rolled back. Reading that must stop part way (ImportStopped) still applies what was read before
    it, and says where it stopped."""
    summary = ImportSummary()
    seen: dict[str, int] = {}
    batch: list[ImportRecord] = []
    try:
        for record in records:
            batch.append(record)
            if len(batch) == BATCH_SIZE:
                _import_batch(batch, summary, seen, shop=shop, dry_run=dry_run)
                batch = []
    except ImportStopped as stopped:
        summary.stopped = f"line {stopped.line} {stopped.reason}; nothing after it was read"
    _import_batch(batch, summary, seen, shop=shop, dry_run=dry_run)
    return summary


def _import_batch(
    batch: list[ImportRecord], summary: ImportSummary, seen: dict[str, int], *, shop: Shop, dry_run: bool
) -> None:
    with transaction.atomic():
        for record in batch:
            _import_one(record, summary, seen, shop=shop)
        if dry_run:
            transaction.set_rollback(True)


def _import_one(record: ImportRecord, summary: ImportSummary, seen: dict[str, int], *, shop: Shop) -> None:
    if record.number and record.number in seen and not record.problems:
        record.problems.append(
            _row_problem(
                f"repeats order {record.number} of line {seen[record.number]}: an order comes once in a "
                "file, its rows together"
            )
        )
    if record.number:
        seen.setdefault(record.number, record.line)
    if record.problems:
        summary.refuse(record)
        return
    try:
        incoming = incoming_order_clean(number=record.number, data=record.data)
        # order_upsert is its own savepoint; a version refused as undoing what Bookly did (OrderConflict)
        # leaves its record on the order, which a savepoint around this call would roll back.
        _, outcome = order_upsert(incoming=incoming, source=OrderSource.IMPORT, shop=shop)
    except OrderRefused as refused:
        record.problems = refused.problems
        summary.refuse(record)
        return
    if outcome is UpsertOutcome.CREATED:
        summary.created += 1
    elif outcome is UpsertOutcome.UPDATED:
        summary.updated += 1
    else:
        summary.unchanged += 1
