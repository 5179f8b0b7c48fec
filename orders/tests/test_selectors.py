import re
from datetime import date

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from orders.numbers import order_numbering
from orders.selectors import (
    EligibilityCode,
    order_get_for_customer,
    order_get_for_customer_by_rma,
    order_list_for_customer,
    order_return_eligibility,
)
from orders.services import return_record_create
from orders.tests.factories import OrderFactory, OrderItemFactory, delivered_order
from policies.selectors import return_policy_get
from store.categories import ItemCategory

TODAY = date(2026, 4, 14)


@pytest.mark.django_db
class TestOrderListForCustomer:
    def test_the_customers_newest_orders_only(self):
        newest = [
            OrderFactory.create(customer_email="ann@example.com", ordered_on=date(2026, 4, day))
            for day in range(1, 8)
        ]
        OrderFactory.create(customer_email="bob@example.com", ordered_on=date(2026, 4, 9))
        listed = list(order_list_for_customer(email="ann@example.com", limit=5))
        assert listed == newest[::-1][:5]

    @pytest.mark.parametrize("signed_in", ["Zoë@Example.com", "ZOË@EXAMPLE.COM", " zoë@example.com "])
    def test_email_matches_whatever_its_case_including_non_ascii_letters(self, signed_in):
        order = OrderFactory.create(customer_email="zoë@example.com")
        assert list(order_list_for_customer(email=signed_in)) == [order]


@pytest.mark.django_db
class TestOrderGetForCustomer:
    def test_matching_email_returns_the_order(self):
        order = OrderFactory.create(number="BK-1234", customer_email="ann@example.com")
        assert order_get_for_customer(order_number="BK-1234", email="ann@example.com") == order

    @pytest.mark.parametrize("typed", ["  Ann@Example.COM ", "ANN@EXAMPLE.COM", "\tann@example.com\n"])
    def test_email_is_trimmed_and_case_insensitive(self, typed):
        order = OrderFactory.create(number="BK-1234", customer_email="ann@example.com")
        assert order_get_for_customer(order_number="BK-1234", email=typed) == order

    def test_order_number_is_trimmed_and_case_insensitive(self):
        order = OrderFactory.create(number="BK-1234", customer_email="ann@example.com")
        assert order_get_for_customer(order_number=" bk-1234 ", email="ann@example.com") == order

    def test_wrong_email_looks_exactly_like_a_missing_order(self):
        OrderFactory.create(number="BK-1234", customer_email="ann@example.com")
        wrong_email = order_get_for_customer(order_number="BK-1234", email="bob@example.com")
        missing = order_get_for_customer(order_number="BK-9999", email="ann@example.com")
        assert wrong_email is None
        assert missing is None

    def test_wrong_email_and_missing_order_run_the_same_queries(self):
        """Same statements, literals aside: a different amount of work shows in the answer's time."""
        OrderItemFactory.create(order=OrderFactory.create(number="BK-1234", customer_email="ann@example.com"))

        def statements(order_number, email):
            order_numbering()  # the shops' shapes, read once every few seconds whoever asks: not counted
            with CaptureQueriesContext(connection) as queries:
                assert order_get_for_customer(order_number=order_number, email=email) is None
            return [re.sub(r"'[^']*'|%s|\b\d+\b", "?", query["sql"]) for query in queries]

        assert statements("BK-1234", "bob@example.com") == statements("BK-9999", "ann@example.com")

    def test_email_of_another_customer_does_not_unlock_an_order(self):
        OrderFactory.create(number="BK-1234", customer_email="ann@example.com")
        OrderFactory.create(number="BK-5678", customer_email="bob@example.com")
        assert order_get_for_customer(order_number="BK-1234", email="bob@example.com") is None

    def test_empty_email_never_matches(self):
        OrderFactory.create(number="BK-1234", customer_email="ann@example.com")
        assert order_get_for_customer(order_number="BK-1234", email="") is None


@pytest.mark.django_db
class TestOrderGetForCustomerByRma:
    @pytest.fixture
    def rma(self):
        order = delivered_order(days_ago=3, today=TODAY, customer_email="ann@example.com")
        return return_record_create(order=order, reason="Torn", today=TODAY).rma_number

    def test_the_returns_order_with_the_email_on_it(self, rma):
        order = order_get_for_customer_by_rma(rma_number=f" {rma.lower()} ", email="Ann@example.com")
        assert order is not None and order.returns.get().rma_number == rma

    def test_wrong_email_and_missing_return_look_the_same_and_run_the_same_queries(self, rma):
        def statements(rma_number, email):
            with CaptureQueriesContext(connection) as queries:
                assert order_get_for_customer_by_rma(rma_number=rma_number, email=email) is None
            return [re.sub(r"'[^']*'|%s|\b\d+\b", "?", query["sql"]) for query in queries]

        assert statements(rma, "bob@example.com") == statements("RMA-NONE0000", "ann@example.com")


@pytest.mark.django_db
class TestReturnEligibility:
    @pytest.mark.parametrize(
        ("days_ago", "eligible"),
        [(0, True), (1, True), (29, True), (30, True), (31, False), (60, False)],
    )
    def test_window_counts_whole_days_from_delivery_day_30_included(self, days_ago, eligible):
        order = delivered_order(days_ago=days_ago, today=TODAY)
        result = order_return_eligibility(order=order, today=TODAY)
        assert result.eligible is eligible
        assert result.days_since_delivery == days_ago

    def test_expired_window_names_the_last_day_in_customer_words(self):
        order = delivered_order(days_ago=31, today=TODAY)
        result = order_return_eligibility(order=order, today=TODAY)
        assert result.code == EligibilityCode.WINDOW_EXPIRED
        assert "30 days of delivery" in result.reason
        assert result.last_return_day == date(2026, 4, 13)
        assert "2026-04-13" in result.reason
        assert not any(entry.returnable for entry in result.items)

    def test_an_order_delivered_on_the_calendars_last_day_is_answered_not_an_overflow(self):
        order = OrderFactory.create(delivered=True, ordered_on=date(9999, 12, 30), delivered_on=date.max)
        OrderItemFactory.create(order=order)
        result = order_return_eligibility(order=order, today=TODAY)
        assert (result.code, result.last_return_day) == (EligibilityCode.ELIGIBLE, date.max)
        assert "9999-12-31" in result.reason

    def test_window_length_comes_from_the_policy_row(self):
        policy = return_policy_get()
        policy.window_days = 10
        policy.save()
        order = delivered_order(days_ago=11, today=TODAY)
        assert order_return_eligibility(order=order, today=TODAY).code == EligibilityCode.WINDOW_EXPIRED

    @pytest.mark.parametrize(("trait", "code"), [("shipped", "not_delivered"), (None, "not_delivered")])
    def test_undelivered_orders_cannot_be_returned(self, trait, code):
        order = OrderFactory.create(**({trait: True} if trait else {}))
        OrderItemFactory.create(order=order)
        result = order_return_eligibility(order=order, today=TODAY)
        assert result.code == code
        assert not result.eligible
        assert "not been delivered" in result.reason

    def test_cancelled_order_cannot_be_returned(self):
        order = OrderFactory.create(status="cancelled")
        result = order_return_eligibility(order=order, today=TODAY)
        assert result.code == EligibilityCode.CANCELLED

    def test_non_returnable_categories_are_excluded_item_by_item(self):
        order = delivered_order(
            days_ago=5,
            today=TODAY,
            categories=[ItemCategory.FICTION, ItemCategory.EBOOK, ItemCategory.GIFT_CARD],
        )
        result = order_return_eligibility(order=order, today=TODAY)
        assert result.eligible
        verdicts = {entry.item.category: entry for entry in result.items}
        assert verdicts["fiction"].returnable
        assert not verdicts["ebook"].returnable
        assert verdicts["ebook"].reason == "This is an ebook, and ebooks cannot be returned."
        assert not verdicts["gift_card"].returnable
        assert verdicts["gift_card"].reason == "This is a gift card, and gift cards cannot be returned."

    def test_order_of_only_non_returnable_items_is_not_eligible(self):
        order = delivered_order(
            days_ago=5, today=TODAY, categories=[ItemCategory.AUDIOBOOK, ItemCategory.PERSONALIZED_ITEM]
        )
        result = order_return_eligibility(order=order, today=TODAY)
        assert result.code == EligibilityCode.NO_RETURNABLE_ITEMS
        assert result.returnable_items == []

    def test_items_already_in_an_open_return_are_not_returnable_again(self):
        order = delivered_order(
            days_ago=5, today=TODAY, categories=[ItemCategory.FICTION, ItemCategory.NONFICTION]
        )
        first = order.items.get(line_number=1)
        return_record_create(order=order, reason="Damaged", items=[first], today=TODAY)
        result = order_return_eligibility(order=order, today=TODAY)
        assert result.eligible
        assert [item.line_number for item in result.returnable_items] == [2]
        held = next(entry for entry in result.items if entry.item == first)
        assert held.reason == "This item is already part of an open return."

    def test_everything_already_returned_says_so(self):
        order = delivered_order(days_ago=5, today=TODAY)
        return_record_create(order=order, reason="Changed my mind", today=TODAY)
        result = order_return_eligibility(order=order, today=TODAY)
        assert result.code == EligibilityCode.ALREADY_RETURNED
