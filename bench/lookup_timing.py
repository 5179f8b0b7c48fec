"""A wrong email against a missing order: do the two answers take the same time?

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/DB .venv/bin/python bench/lookup_timing.py [--pairs 3000]

Runs `orders.selectors.order_get_for_customer` in this process against a database holding the demo
orders (`manage.py loaddata demo`), alternating the two cases so that drift hits both, and prints
their medians and ratio. It changes nothing.
"""

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "bookly.settings")
os.environ.setdefault("DJANGO_SECRET_KEY", "bench-lookup-timing")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=3000)
    parser.add_argument("--existing", default="BK-10042", help="an order number that exists")
    parser.add_argument("--missing", default="BK-99999", help="one that does not")
    args = parser.parse_args()

    import django

    django.setup()
    from orders.selectors import order_get_for_customer

    times = {args.existing: [], args.missing: []}
    for pair in range(args.pairs):
        order = (args.existing, args.missing) if pair % 2 else (args.missing, args.existing)
        for number in order:
            started = time.perf_counter()
            order_get_for_customer(order_number=number, email="not-the-customer@example.com")
            times[number].append(time.perf_counter() - started)
    wrong, missing = (statistics.median(times[n]) * 1e6 for n in (args.existing, args.missing))
    print(f"wrong email: median {wrong:.0f} us; missing order: median {missing:.0f} us")
    print(f"ratio {wrong / missing:.3f}")


if __name__ == "__main__":
    main()
