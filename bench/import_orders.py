"""How long `manage.py import_orders` takes for many orders, and whether its memory stays flat.

    .venv/bin/python bench/import_orders.py [--orders 50000] [--database sqlite|postgres] [--format csv|jsonl]

Writes a file of generated orders (two items each, every fifth order delivered), migrates a fresh
database (a temporary SQLite file, or `bookly_bench_import` on 127.0.0.1:5432), then runs the real
command in a child process, first with a tenth of the orders and then with all of them, and a second
time with all of them (every order unchanged). Prints each run's wall time, orders per second and the
child's peak resident memory: flat memory shows as the same peak for a tenth and for all.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import database  # noqa: E402 - needs ROOT on sys.path when run as a script

PYTHON = sys.executable
CSV_HEADER = (
    "number,customer_name,customer_email,status,ordered_on,delivered_on,tracking_number,carrier,total,"
    "ship_name,ship_line1,ship_line2,ship_city,ship_region,ship_postal_code,ship_country,"
    "line_number,title,author,unit_price,quantity,category"
)


_ITEMS = (
    {"title": "Dune", "author": "Frank Herbert", "unit_price": "24.99", "category": "fiction"},
    {"title": "The Gruffalo", "author": "Julia Donaldson", "unit_price": "8.99", "category": "childrens"},
)


def _order(index: int) -> dict:
    delivered = index % 5 == 0
    return {
        "number": f"BK-{100000 + index}",
        "customer_name": f"Reader {index}",
        "customer_email": f"reader{index}@example.com",
        "status": "delivered" if delivered else "shipped",
        "ordered_on": "2026-04-01",
        "delivered_on": "2026-04-04" if delivered else None,
        "tracking_number": f"1Z999AA1{index:010d}",
        "carrier": "UPS",
        "total": "33.98",
        "shipping_address": {
            "name": f"Reader {index}",
            "line1": f"{index} Main St",
            "line2": "",
            "city": "Springfield",
            "region": "IL",
            "postal_code": "62701",
            "country": "US",
        },
        "items": [{"line_number": line, "quantity": 1, **item} for line, item in enumerate(_ITEMS, start=1)],
    }


def _csv_rows(order: dict) -> list[str]:
    """The order as the CSV import reads it: its columns on each of its item rows."""
    fields = {**order, **{f"ship_{name}": value for name, value in order["shipping_address"].items()}}
    rows = []
    for item in order["items"]:
        values = {**fields, **item}
        rows.append(",".join(str(values.get(column) or "") for column in CSV_HEADER.split(",")))
    return rows


def _write(path: Path, count: int, file_format: str) -> None:
    with path.open("w", encoding="utf-8") as out:
        if file_format == "csv":
            out.write(CSV_HEADER + "\n")
        for index in range(count):
            order = _order(index)
            lines = [json.dumps(order)] if file_format == "jsonl" else _csv_rows(order)
            out.write("\n".join(lines) + "\n")


def _manage(env: dict, *args: str) -> tuple[float, int, str]:
    """Run manage.py in a child; its wall time, its own peak resident memory (MiB) and last line said."""
    with tempfile.TemporaryFile() as output:
        started = time.perf_counter()
        command = [PYTHON, str(ROOT / "manage.py"), *args]
        child = subprocess.Popen(command, env=env, cwd=ROOT, stdout=output, stderr=subprocess.STDOUT)  # noqa: S603
        _, status, usage = os.wait4(child.pid, 0)  # this child's usage alone (Linux: ru_maxrss in KiB)
        elapsed = time.perf_counter() - started
        output.seek(0)
        said = output.read().decode(errors="replace").strip()
    if status:
        raise SystemExit(f"manage.py {' '.join(args)} failed:\n{said[-2000:]}")
    return elapsed, usage.ru_maxrss // 1024, said.splitlines()[-1] if said else ""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--orders", type=int, default=50_000)
    parser.add_argument("--database", choices=("sqlite", "postgres"), default="sqlite")
    parser.add_argument("--format", choices=("csv", "jsonl"), default="jsonl")
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="bookly-import-"))
    env = {
        **os.environ,
        "DJANGO_SECRET_KEY": "bench-import",
        "DJANGO_DEBUG": "0",
        "DJANGO_ALLOWED_HOSTS": "x",
    }
    if args.database == "sqlite":
        env["DATABASE_URL"] = f"sqlite:///{work / 'bench.sqlite3'}"
    else:
        env["DATABASE_URL"] = "postgres://postgres@127.0.0.1:5432/bookly_bench_import"
        database.recreate(env["DATABASE_URL"])
    _manage(env, "migrate", "-v0")

    tenth, whole = work / f"tenth.{args.format}", work / f"all.{args.format}"
    _write(tenth, args.orders // 10, args.format)
    _write(whole, args.orders, args.format)
    size = whole.stat().st_size / 2**20
    print(f"{args.orders:,} orders, {args.format}, {args.database} ({size:.0f} MiB file)")
    for label, path, count in (
        ("a tenth, new", tenth, args.orders // 10),
        ("all (the tenth unchanged), new", whole, args.orders),
        ("all again, unchanged", whole, args.orders),
    ):
        # Each run is a fresh child, so its peak memory is its own.
        elapsed, peak, said = _manage(env, "import_orders", str(path))
        print(f"  {label:32} {elapsed:7.1f} s  {count / elapsed:7.0f} orders/s  peak {peak:4d} MiB  | {said}")


if __name__ == "__main__":
    main()
