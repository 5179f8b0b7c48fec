from datetime import date
from decimal import Decimal

import pytest
from django.core.exceptions import ValidationError
from django.db import IntegrityError

from orders.models import OrderStatus
from orders.patterns import AMOUNT_MENTION_RE, ISO_DATE_MENTION_RE, amount_mention_number
from orders.tests.factories import OrderFactory, OrderItemFactory


@pytest.mark.django_db
class TestOrderRulesHeldByTheDatabase:
    def test_delivered_order_needs_a_delivery_date(self):
        with pytest.raises(IntegrityError):
            OrderFactory.create(status=OrderStatus.DELIVERED, tracking_number="1Z", delivered_on=None)

    def test_undelivered_order_has_no_delivery_date(self):
        with pytest.raises(IntegrityError):
            OrderFactory.create(
                status=OrderStatus.SHIPPED, tracking_number="1Z", delivered_on=date(2026, 4, 2)
            )

    def test_delivery_cannot_precede_the_order(self):
        with pytest.raises(IntegrityError):
            OrderFactory.create(delivered=True, ordered_on=date(2026, 4, 5), delivered_on=date(2026, 4, 1))

    def test_processing_order_has_no_tracking_number(self):
        with pytest.raises(IntegrityError):
            OrderFactory.create(status=OrderStatus.PROCESSING, tracking_number="1Z999")

    def test_unknown_status_is_refused(self):
        with pytest.raises(IntegrityError):
            OrderFactory.create(status="lost")

    def test_order_number_is_unique(self):
        OrderFactory.create(number="BK-1000")
        with pytest.raises(IntegrityError):
            OrderFactory.create(number="BK-1000")

    def test_item_quantity_must_be_positive(self):
        with pytest.raises(IntegrityError):
            OrderItemFactory.create(quantity=0)


@pytest.mark.django_db
@pytest.mark.parametrize("number", ["BK-123", "BK-1234567", "bk-1234", "XX-1234", "BK-12a4"])
def test_order_number_shape_is_validated(number):
    order = OrderFactory.build(number=number, total=Decimal("1.00"))
    with pytest.raises(ValidationError) as error:
        order.full_clean()
    assert "number" in error.value.message_dict


@pytest.mark.django_db
def test_line_total_multiplies_price_by_quantity():
    item = OrderItemFactory.create(unit_price=Decimal("16.99"), quantity=3)
    assert item.line_total == Decimal("50.97")


class TestThePatternsDefinedHereOnce:
    """The shapes orders.models owns for the rest of the project to import (a date, an amount)."""

    @pytest.mark.parametrize(
        ("text", "found"),
        [("Delivered on 2026-03-30.", ["2026-03-30"]), ("order 12026-03-301", []), ("30/03/2026", [])],
    )
    def test_an_iso_date_is_found_as_a_whole_word(self, text, found):
        assert ISO_DATE_MENTION_RE.findall(text) == found

    @pytest.mark.parametrize(
        ("text", "number"),
        [
            ("a refund of $24.99.", "24.99"),
            ("$ 1,200 in all", "1,200"),
            ("$5.999", "5.99"),
            ("24.99 USD", "24.99"),
            ("a total of R$ 189.90", "189.90"),
            ("₹1,499.00 in all", "1,499.00"),
            ("EUR 12.50", "12.50"),
            ("CA$30", "30"),
            ("ALL 3 books", None),
            ("SGD12.50 in all", "12.50"),
            ("your return RMA-GBP12345", None),
            ("your return RMA-7EUR1234", None),
            ("your return RMA-1234EUR5", None),
            ("order BK-10042 has 2 books", None),
        ],
    )
    def test_an_amount_in_any_currency_is_found_with_its_number(self, text, number):
        match = AMOUNT_MENTION_RE.search(text)
        assert (amount_mention_number(match) if match else None) == number
