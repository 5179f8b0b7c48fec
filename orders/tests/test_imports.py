import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from orders import imports
from orders.imports import (
    CSV_COLUMNS,
    MAX_LINE_CHARS,
    ImportFileInvalid,
    orders_import,
    records_from_csv,
    records_from_jsonl,
)
from orders.models import Order, OrderSource
from orders.shops import shop_own

pytestmark = pytest.mark.django_db

SAMPLE_CSV = Path(__file__).resolve().parents[2] / "fixtures" / "orders_sample.csv"
SAMPLE_JSONL = SAMPLE_CSV.with_suffix(".jsonl")
HEADER = ",".join(CSV_COLUMNS)


def row(number="BK-30001", line=1, title="Dune", **changes) -> str:
    values = {
        "number": number,
        "customer_name": "Ada Reader",
        "customer_email": "ada@example.com",
        "status": "processing",
        "ordered_on": "2026-04-01",
        "total": "24.99",
        "line_number": str(line),
        "title": title,
        "unit_price": "24.99",
        "quantity": "1",
        "category": "fiction",
        **changes,
    }
    return ",".join(values.get(column, "") for column in CSV_COLUMNS)


def import_csv(*rows, dry_run=False):
    return orders_import(shop=shop_own(), records=records_from_csv([HEADER, *rows]), dry_run=dry_run)


def refusals(summary) -> list[tuple[int, str]]:
    return [(record.line, record.problems[0]["problem"]) for record in summary.refused]


def run(path: Path, *args) -> str:
    out = StringIO()
    call_command("import_orders", str(path), *args, stdout=out)
    return out.getvalue()


class TestCommand:
    def test_the_sample_files_import_and_a_second_run_changes_nothing(self):
        assert run(SAMPLE_CSV) == "Created 3, updated 0, left 0 unchanged, refused 0.\n"
        assert run(SAMPLE_JSONL) == "Created 1, updated 0, left 0 unchanged, refused 0.\n"
        assert run(SAMPLE_CSV) == "Created 0, updated 0, left 3 unchanged, refused 0.\n"
        order = Order.objects.get(number="BK-20001")
        assert order.source == OrderSource.IMPORT
        assert [(item.title, item.quantity) for item in order.items.all()] == [
            ("Dune", 1),
            ("The Gruffalo", 2),
        ]

    def test_a_dry_run_counts_and_changes_nothing(self):
        assert (
            run(SAMPLE_CSV, "--dry-run") == "Would have created 3, updated 0, left 0 unchanged, refused 0.\n"
        )
        assert not Order.objects.exists()

    def test_refused_orders_are_listed_with_their_line_and_the_command_fails(self, tmp_path):
        path = tmp_path / "orders.csv"
        path.write_text("\n".join([HEADER, row(), row("BK-30002", customer_email="nope")]) + "\n")
        with pytest.raises(CommandError, match="1 orders were refused; the others were imported"):
            run(path)
        assert Order.objects.filter(number="BK-30001").exists()
        assert not Order.objects.filter(number="BK-30002").exists()

    def test_a_file_that_is_not_text_or_has_no_known_format_is_refused_plainly(self, tmp_path):
        binary = tmp_path / "orders.csv"
        binary.write_bytes(b"\xff\xfe\x00\x01garbage")
        with pytest.raises(CommandError, match="is not UTF-8 text"):
            run(binary)
        with pytest.raises(CommandError, match="--format"):
            run(tmp_path / "orders.xlsx")


class TestCsv:
    def test_the_rows_of_an_order_make_one_order_with_its_items(self):
        summary = import_csv(row(line=1), row(line=2, title="Emma"), row("BK-30002"))
        assert (summary.created, summary.refused_count) == (2, 0)
        assert Order.objects.get(number="BK-30001").items.count() == 2

    def test_cells_with_spaces_around_them_are_read_without(self):
        summary = import_csv(row(total=" 24.99 ", unit_price="24.99 ", currency=" usd "))
        assert (summary.created, summary.refused_count) == (1, 0)
        order = Order.objects.get(number="BK-30001")
        assert (str(order.total), order.currency) == ("24.99", "USD")

    def test_an_order_whose_rows_disagree_is_refused_whole(self):
        summary = import_csv(row(line=1), row(line=2, total="99.00"))
        assert refusals(summary) == [(2, "differs between the rows of this order (line 3)")]
        assert not Order.objects.exists()

    def test_an_order_whose_rows_are_apart_is_refused_the_second_time(self):
        summary = import_csv(row(), row("BK-30002"), row(line=2, title="Emma"))
        assert summary.created == 2
        assert refusals(summary)[0][0] == 4
        assert refusals(summary)[0][1].startswith("repeats order BK-30001 of line 2")

    def test_a_duplicate_item_line_is_named(self):
        summary = import_csv(row(line=1), row(line=1, title="Emma"))
        assert summary.refused[0].problems == [
            {"field": "items[1].line_number", "problem": "is used by another item of this order"}
        ]

    def test_a_row_with_a_stray_comma_refuses_its_whole_order_and_leaves_it_as_it_was(self):
        import_csv(row(line=1), row(line=2, title="Emma"))
        summary = import_csv(row(line=1), row(line=2, title="Emma, a novel"), row("BK-30002"))
        columns = len(CSV_COLUMNS)
        assert (summary.created, refusals(summary)) == (
            1, [(2, f"line 3 has {columns + 1} values for {columns} columns")],
        )  # fmt: skip
        assert Order.objects.get(number="BK-30001").items.count() == 2  # not applied without its row

    @pytest.mark.parametrize("bad", ['BK-30002,"Dune', row("BK-30002", title="x" * 200_000)])
    def test_a_row_that_cannot_be_read_stops_the_import_there_and_keeps_what_came_before(self, bad):
        """The order read just before may have lost rows to it: refused too, saying why."""
        summary = import_csv(row("BK-30000"), row(), bad, row("BK-30003"))
        assert summary.created == 1 and summary.stopped.startswith("line 4 cannot be read as CSV")
        assert refusals(summary) == [(3, "is followed by line 4, which cannot be read")]
        assert "x" * 100 not in summary.stopped
        assert not Order.objects.exclude(number="BK-30000").exists()

    def test_text_that_is_not_utf8_stops_the_command_with_what_came_before_imported(self, tmp_path):
        path = tmp_path / "orders.csv"
        rows = [row(f"BK-{40000 + index}") for index in range(300)]  # past the first block read
        path.write_bytes(("\n".join([HEADER, *rows, ""])).encode() + b"\xff\xfe broken\n")
        with pytest.raises(CommandError, match=r"Stopped: line \d+ cannot be read as CSV.*were imported"):
            run(path)
        assert Order.objects.filter(number="BK-40000").exists()

    def test_a_quantity_that_only_looks_like_a_number_is_refused_by_field(self):
        summary = import_csv(row(quantity="²"), row("BK-30002", quantity="9" * 5000))
        assert [record.problems[0]["field"] for record in summary.refused] == ["items[0].quantity"] * 2

    def test_a_header_that_does_not_fit_imports_nothing(self):
        with pytest.raises(ImportFileInvalid, match="unknown column 'colour'; missing column 'title'"):
            list(records_from_csv(["number,customer_name,customer_email,status,ordered_on,total,line_number,"
                                   "unit_price,quantity,category,colour"]))  # fmt: skip


class TestJsonLines:
    def test_lines_that_are_not_orders_are_refused_by_line(self):
        lines = [
            "[1, 2]",
            "{not json",
            "",
            json.dumps({"number": "BK-30001", "status": "lost"}),
            "[" * 100_000,
        ]
        summary = orders_import(shop=shop_own(), records=records_from_jsonl(lines))
        assert refusals(summary)[:2] == [(1, "is not a JSON object"), (2, "is not valid JSON")]
        assert summary.refused[2].line == 4 and summary.refused[2].number == "BK-30001"
        assert refusals(summary)[3] == (5, "is not valid JSON")  # nested past the parser's depth
        assert {problem["field"] for problem in summary.refused[2].problems} >= {"status", "customer_name"}

    def test_a_line_too_long_to_be_an_order_is_refused_unread(self):
        huge = json.dumps({"number": "BK-30001", "customer_name": "x" * (MAX_LINE_CHARS + 1)})
        summary = orders_import(shop=shop_own(), records=records_from_jsonl([huge]))
        assert refusals(summary) == [(1, "is too long to be an order")]

    def test_refusals_past_the_kept_number_are_counted_not_kept(self, monkeypatch):
        monkeypatch.setattr(imports, "MAX_REFUSALS_KEPT", 2)
        summary = orders_import(shop=shop_own(), records=records_from_jsonl(["[]"] * 5))
        assert (summary.refused_count, len(summary.refused)) == (5, 2)
