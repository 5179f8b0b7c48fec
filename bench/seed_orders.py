"""Adds returnable orders for the benchmark: copies of the demo's BK-10042 (delivered, two books).

    .venv/bin/python -m bench.seed_orders 5000

Run by bench/run.py after `loaddata demo`, with the site's environment. Order i
is number BK-(300000 + i) with email reader<i>@example.com (bench/conversation.py).
"""

import os
import sys

BATCH = 1000


def main() -> None:
    count = int(sys.argv[1])
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "bookly.settings")
    import django

    django.setup()
    from django.db import transaction

    from bench.conversation import seeded_order
    from orders.models import Order, OrderItem

    template = Order.objects.get(number="BK-10042")
    lines = list(template.items.order_by("line_number"))
    for start in range(0, count, BATCH):
        with transaction.atomic():
            orders = Order.objects.bulk_create(
                Order(
                    number=number,
                    customer_name=f"Reader {index}",
                    customer_email=email,
                    status=template.status,
                    ordered_on=template.ordered_on,
                    delivered_on=template.delivered_on,
                    tracking_number=template.tracking_number,
                    total=template.total,
                )
                for index in range(start, min(count, start + BATCH))
                for number, email in [seeded_order(index)]
            )
            OrderItem.objects.bulk_create(
                OrderItem(
                    order=order,
                    line_number=line.line_number,
                    title=line.title,
                    author=line.author,
                    unit_price=line.unit_price,
                    quantity=line.quantity,
                    category=line.category,
                )
                for order in orders
                for line in lines
            )
    print(f"seeded {count} orders")


if __name__ == "__main__":
    main()
