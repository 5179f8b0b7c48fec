from datetime import date

import pytest

BEFORE = [("orders", "0014_shop_time_cleared")]
AFTER = [("orders", "0015_order_currency_country_category")]


# Serialized rollback, like the suite's other transactional tests: the content types survive the flush.
@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_every_order_kept_before_countries_keeps_its_address_in_the_united_states_and_its_amounts(
    migrate, settings
):
    settings.BOOKLY_STORE_CURRENCY = "EUR"  # set before upgrading: the orders kept before were in dollars
    old = migrate(BEFORE)
    orders = old.get_model("orders", "Order").objects
    fields = {"customer_name": "Ann", "customer_email": "ann@example.com", "status": "processing",
              "ordered_on": date(2026, 4, 1), "total": "10.00"}  # fmt: skip
    addressed = orders.create(number="BK-1234", ship_to="Ann", ship_line1="1 Main St", ship_city="Peoria",
                              ship_state="IL", ship_zip="61602", **fields)  # fmt: skip
    orders.create(number="BK-1235", **fields)
    moved = {
        "to": "Ann",
        "line1": "1 Main St",
        "line2": "",
        "city": "Peoria",
        "state": "IL",
        "zip": "61602",
    }
    old.get_model("orders", "OrderChange").objects.create(
        order=addressed, kind="address_changed", before={}, after=moved
    )

    new = migrate(AFTER)

    kept = new.get_model("orders", "Order").objects.order_by("number")
    assert [(order.ship_country, order.currency, str(order.total)) for order in kept] == [
        ("US", "USD", "10.00"),
        ("", "USD", "10.00"),  # no address, no country
    ]
    change = new.get_model("orders", "OrderChange").objects.get()
    assert (change.before, change.after) == ({}, {**moved, "country": "US"})
