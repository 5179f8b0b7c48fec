import copy
import json
from datetime import date, timedelta
from decimal import Decimal

import pytest
from django.db import transaction
from django.utils import timezone
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from orders.addresses import OrderAddress
from orders.inbound import MAX_ITEMS, ORDER_EXAMPLE, ORDER_FIELDS
from orders.intake import (
    ConflictCode,
    OrderConflict,
    OrderRefused,
    UpsertOutcome,
    incoming_order_clean,
    order_upsert,
    shipping_address_shape,
)
from orders.models import DeliveryProblem, Order, OrderChangeKind, OrderSource, OrderStatus, ReturnStatus
from orders.selectors import order_return_eligibility
from orders.services import (
    delivery_case_open,
    order_cancel,
    order_shipping_address_change,
    return_record_create,
)
from orders.shops import shop_own
from orders.tests.factories import ReturnRecordFactory
from store.clock import store_today

GRUFFALO = {
    "line_number": 2,
    "title": "The Gruffalo",
    "unit_price": "8.99",
    "quantity": 2,
    "category": "childrens",
}
ADA = {
    **ORDER_EXAMPLE,
    "customer_email": "Ada@Example.com",
    "total": "42.98",
    "items": [*ORDER_EXAMPLE["items"], GRUFFALO],
}


# 230 characters as sent, 260 once lower-cased ("İ" becomes two): longer than the column.
LONG_WHEN_LOWERED = "a" * 64 + "@" + ".".join(["İ" * 10 + "a" * 43] * 3) + ".com"


SAMPLE_VALUES = ["", "2026-04-01", "2026-02-30", "0.00", "99999999.99", "1e3", "NaN", "delivered",
                 "processing", "cancelled", "a@b.co", LONG_WHEN_LOWERED]  # fmt: skip


def problems(data, number="BK-20001") -> dict[str, str]:
    with pytest.raises(OrderRefused) as refused:
        incoming_order_clean(number=number, data=data)
    return {problem["field"]: problem["problem"] for problem in refused.value.problems}


def changed(**fields) -> dict:
    data = copy.deepcopy(ADA)
    data.update(fields)
    return data


def upsert(data=ADA, number="BK-20001", source=OrderSource.API):
    return order_upsert(
        incoming=incoming_order_clean(number=number, data=data), source=source, shop=shop_own()
    )


class TestClean:
    def test_a_whole_order_is_read_as_sent(self):
        order = incoming_order_clean(number=" bk-20001 ", data=ADA)
        assert (order.number, order.customer_email, order.total) == (
            "BK-20001",
            "ada@example.com",
            Decimal("42.98"),
        )
        assert [item.title for item in order.items] == ["Dune", "The Gruffalo"]
        assert order.address is not None
        assert order.address.one_line() == "Ada Reader, 1 Main St, Springfield, IL 62701"

    def test_unknown_fields_are_refused_by_name_and_odd_names_are_not_echoed(self):
        found = problems(changed(gift_note="hi", **{"<script>": 1}))
        assert found == {
            "gift_note": "is not a field of an order here",
            "(unknown)": "is not a field of an order here",
        }

    @pytest.mark.parametrize(
        ("fields", "field", "problem"),
        [
            ({"ordered_on": None}, "ordered_on", "is required"),
            ({"total": None}, "total", "is required"),
            ({"customer_email": LONG_WHEN_LOWERED}, "customer_email", "must be at most 254 characters"),
            ({"customer_email": "not an email"}, "customer_email", "must be an email address"),
            ({"status": "lost"}, "status", "must be one of processing, shipped, delivered, cancelled"),
            ({"status": "delivered"}, "delivered_on", "is required for a delivered order"),
            ({"delivered_on": "2026-04-03"}, "delivered_on", "must be null unless the order is delivered"),
            (
                {"status": "delivered", "delivered_on": "2026-03-01"},
                "delivered_on",
                "must not be before ordered_on",
            ),
            ({"status": "processing"}, "tracking_number", "must be empty while the order is processing"),
            ({"ordered_on": "01/04/2026"}, "ordered_on", "must be a date like 2026-04-01"),
            ({"total": "-1.00"}, "total", "must be zero or more, with at most two decimals"),
            ({"total": "1.005"}, "total", "must be zero or more, with at most two decimals"),
            ({"total": 12.5}, "total", 'must be an amount like "24.99" (a string)'),
            ({"total": "100000000"}, "total", "must be less than 100,000,000"),
            ({"total": "1e3"}, "total", 'must be an amount like "24.99" (a string)'),  # no exponents
            ({"total": "NaN"}, "total", 'must be an amount like "24.99" (a string)'),
            (
                {"customer_name": "Ada\u202eRedaer"},
                "customer_name",
                "must not contain control or invisible characters",
            ),
            ({"customer_name": "x" * 201}, "customer_name", "must be at most 200 characters"),
            ({"items": []}, "items", "must be a list of at least one item"),
        ],
    )
    def test_each_problem_is_named_by_field_without_echoing_the_value(self, fields, field, problem):
        found = problems(changed(**fields))
        assert found == {field: problem}
        assert "not an email" not in json.dumps(found) and "Redaer" not in json.dumps(found)

    def test_item_problems_name_the_item(self):
        items = copy.deepcopy(ADA["items"])
        items[1].update(line_number=1, quantity=True, category="comics")  # true is no quantity
        items[0]["unit_price"] = "free"
        assert problems(changed(items=items)) == {
            "items[0].unit_price": 'must be an amount like "24.99" (a string)',
            "items[1].line_number": "is used by another item of this order",
            "items[1].quantity": "must be a whole number from 1 to 999",
            "items[1].category": "must be one of "
            + ", ".join(
                ["fiction", "nonfiction", "childrens", "ebook", "audiobook", "gift_card", "personalized_item"]
            ),
        }

    def test_an_order_of_more_items_than_an_order_holds_is_refused_before_reading_them(self):
        items = [{**GRUFFALO, "line_number": line} for line in range(1, MAX_ITEMS + 2)]
        assert problems(changed(items=items)) == {"items": f"must hold at most {MAX_ITEMS} items"}

    def test_an_address_abroad_is_taken_by_its_countrys_rules(self):
        toronto = {**ADA["shipping_address"], "city": "Toronto", "region": "ON", "postal_code": "m5v 2t6"}
        order = incoming_order_clean(
            number="BK-20001", data=changed(shipping_address={**toronto, "country": "ca"})
        )
        assert order.address is not None
        assert order.address.one_line() == "Ada Reader, 1 Main St, Toronto ON M5V 2T6, Canada"
        assert problems(changed(shipping_address={**toronto, "country": "US"})) == {
            "shipping_address.region": "must be a US state or DC, like IL or Illinois",
            "shipping_address.postal_code": "must be a US ZIP code, like 62701 or 62701-1234",
        }

    def test_a_malformed_address_is_named_by_the_shops_field(self):
        address = {**ADA["shipping_address"], "country": "Narnia", "postal_code": "62701!"}
        assert problems(changed(shipping_address=address)) == {
            "shipping_address.country": "must be a country, by its ISO 3166 code like US, BR or IN",
            "shipping_address.postal_code": (
                "must be a postal code of letters, digits, spaces and hyphens, like 01310-100"
            ),
        }

    def test_the_currency_is_the_one_sent_or_left_for_its_shops_and_an_item_needs_no_category(self):
        unsaid = {key: value for key, value in ADA.items() if key != "currency"}
        assert incoming_order_clean(number="BK-20001", data=unsaid).currency == ""  # the shop's: upsert
        item = {key: value for key, value in GRUFFALO.items() if key != "category"}
        order = incoming_order_clean(number="BK-20001", data=changed(currency="inr", items=[item]))
        assert (order.currency, order.items[0].category) == ("INR", "")
        assert problems(changed(currency="XYZ")) == {
            "currency": 'must be a currency by its ISO 4217 code, like "USD", "EUR" or "BRL"'
        }
        kuwaiti = problems(changed(currency="KWD"))  # three decimals: refused whole, never rounded
        assert kuwaiti == {"currency": "is not supported yet: amounts are kept with at most two decimals"}

    @pytest.mark.parametrize("email", [None, ""])
    def test_an_order_without_an_email_a_sale_at_the_till_is_taken(self, email):
        data = changed(customer_email=email)
        assert incoming_order_clean(number="BK-20001", data=data).customer_email == ""
        assert (
            incoming_order_clean(number="BK-20001", data={**data, "customer_email": None}).customer_email
            == ""
        )

    def test_every_missing_field_is_named_at_once(self):
        assert set(problems({})) == {
            "customer_name",
            "status",
            "ordered_on",
            "total",
            "items",
        }

    def test_a_required_field_sent_as_null_is_named_once_as_missing(self):
        items = [{**GRUFFALO, "quantity": None}]
        with pytest.raises(OrderRefused) as refused:
            incoming_order_clean(number="BK-20001", data=changed(status=None, items=items))
        assert refused.value.problems == [
            {"field": "status", "problem": "is required"},
            {"field": "items[0].quantity", "problem": "is required"},
        ]

    def test_an_integer_too_long_to_write_out_is_no_amount(self):
        assert problems(changed(total=10**5000)) == {"total": 'must be an amount like "24.99" (a string)'}

    def test_a_number_of_another_shape_is_refused(self):
        assert problems(ADA, number="#1001") == {"number": "must look like BK-10042"}

    @settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow], deadline=None)
    @given(
        st.recursive(
            st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
            lambda children: (
                st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=12), children, max_size=6)
            ),
            max_leaves=30,
        )
    )
    def test_whatever_json_is_sent_the_answer_is_an_order_or_problems_by_field(self, data):
        for sent in (data, changed(items=data), changed(shipping_address=data), {**ADA, "total": data}):
            try:
                incoming_order_clean(number="BK-20001", data=sent)
            except OrderRefused as refused:
                assert refused.problems and all(
                    set(problem) == {"field", "problem"} for problem in refused.problems
                )


@pytest.mark.django_db
class TestUpsert:
    def test_a_new_order_is_created_with_its_items_address_and_source(self):
        order, outcome = upsert()
        assert outcome is UpsertOutcome.CREATED
        assert (order.source, order.carrier, order.ship_zip) == (OrderSource.API, "UPS", "62701")
        assert [(item.line_number, item.quantity) for item in order.items.all()] == [(1, 1), (2, 2)]
        assert shipping_address_shape(order=order) == ADA["shipping_address"]

    def test_the_same_order_again_changes_nothing(self):
        first, _ = upsert()
        again, outcome = upsert(source=OrderSource.IMPORT)
        assert outcome is UpsertOutcome.UNCHANGED
        assert (again.updated_at, again.source) == (first.updated_at, OrderSource.API)

    def test_the_shops_update_replaces_fields_and_items(self):
        upsert()
        emma = {"line_number": 3, "title": "Emma", "unit_price": "5.00", "quantity": 1, "category": "fiction"}
        items = [{**ADA["items"][0], "unit_price": "19.99"}, emma]
        order, outcome = upsert(changed(status="delivered", delivered_on="2026-04-04", items=items))
        assert outcome is UpsertOutcome.UPDATED
        order.refresh_from_db()
        assert (order.status, str(order.delivered_on)) == ("delivered", "2026-04-04")
        assert [(item.line_number, item.unit_price) for item in order.items.all()] == [
            (1, Decimal("19.99")),
            (3, Decimal("5.00")),
        ]

    def test_a_line_a_delivery_case_holds_is_not_removed_and_nothing_changes(self):
        order, _ = upsert(changed(status="delivered", delivered_on="2026-04-04"))
        delivery_case_open(
            order=order, problem=DeliveryProblem.DAMAGED, items=[order.items.get(line_number=2)], details=""
        )
        with pytest.raises(OrderRefused) as refused:
            upsert(
                changed(status="delivered", delivered_on="2026-04-04", total="1.00", items=ADA["items"][:1])
            )
        assert refused.value.problems[0]["problem"].startswith(
            "line 2 is part of a return or a delivery case"
        )
        order.refresh_from_db()
        assert order.total == Decimal("42.98") and order.items.count() == 2

    @settings(max_examples=120, suppress_health_check=list(HealthCheck), deadline=None)
    @given(
        st.dictionaries(
            st.sampled_from([*ORDER_FIELDS, "items[0]"]),
            st.none()
            | st.booleans()
            | st.integers(-5, 10**12)
            | st.text(max_size=300)
            | st.sampled_from(SAMPLE_VALUES),
            max_size=4,
        )
    )  # fmt: skip
    def test_whatever_passes_the_validator_is_stored_without_a_database_error(self, changes):
        data = copy.deepcopy(ADA)
        if "items[0]" in changes:
            data["items"][0]["unit_price"] = changes.pop("items[0]")
        data.update(changes)
        try:
            incoming = incoming_order_clean(number="BK-20001", data=data)
        except OrderRefused:
            return
        with transaction.atomic():
            order_upsert(incoming=incoming, source=OrderSource.API, shop=shop_own())
            transaction.set_rollback(True)

    def test_a_line_a_return_holds_is_not_removed(self):
        order, _ = upsert(changed(status="delivered", delivered_on=str(store_today())))
        return_record_create(
            order=order, reason="Torn", items=[order.items.get(line_number=2)], today=store_today()
        )
        with pytest.raises(OrderRefused):
            upsert(changed(status="delivered", delivered_on=str(store_today()), items=ADA["items"][:1]))
        assert order.items.count() == 2

    def test_two_requests_creating_the_same_order_at_once_make_one(self, monkeypatch):
        """The second found no row to lock (PostgreSQL locks nothing that is missing) and its insert lost
        to the first's: it replaces the order instead of failing."""
        first, _ = upsert()
        real = Order.objects.select_for_update
        missed: list[bool] = []

        def missing_once():
            if not missed:
                missed.append(True)
                return real().none()
            return real()

        monkeypatch.setattr(Order.objects, "select_for_update", missing_once)
        order, outcome = upsert(changed(total="1.00"))
        assert (order.pk, outcome) == (first.pk, UpsertOutcome.UPDATED)
        assert Order.objects.get().total == Decimal("1.00")

    def test_the_demo_fixture_keeps_loading(self, demo_data):
        # Bookly's own demo orders, and one each as Shopify and WooCommerce sent them.
        assert set(Order.objects.values_list("source", flat=True)) == {
            OrderSource.FIXTURE, OrderSource.SHOPIFY, OrderSource.WOOCOMMERCE,
        }  # fmt: skip


def refusal(data, number="BK-20001") -> OrderConflict:
    with pytest.raises(OrderConflict) as refused:
        upsert(data, number=number)
    return refused.value


PROCESSING = changed(status="processing", tracking_number="")
DELIVERED = changed(status="delivered", delivered_on="2026-04-04")
NEW_HOME = OrderAddress(to="Ada Reader", line1="9 Lake Shore Drive", line2="", city="Chicago", state="IL",
                           zip="60611", country="US")  # fmt: skip


@pytest.mark.django_db
class TestNeverBackwards:
    """The rule of orders.intake: the shop's version never undoes what Bookly did."""

    def test_the_shops_older_copy_does_not_undo_a_cancellation_made_here_and_staff_see_it_once(self):
        order, _ = upsert(PROCESSING)
        order_cancel(order=order)
        for _ in range(2):  # the shop's sync sends its copy from before the cancellation again
            conflict = refusal(PROCESSING)
        assert conflict.code is ConflictCode.STATUS_BACKWARDS
        assert "from cancelled to processing: it was cancelled here" in conflict.message
        order.refresh_from_db()
        assert order.status == OrderStatus.CANCELLED
        refused = order.changes.get(kind=OrderChangeKind.UPDATE_REFUSED)
        assert (refused.before["status"], refused.after["status"], refused.after["reason"]) == (
            "cancelled",
            "processing",
            "status_backwards",
        )

    @pytest.mark.parametrize(
        ("before", "after"),
        [
            (DELIVERED, PROCESSING),
            (DELIVERED, changed(status="shipped")),
            (DELIVERED, changed(status="cancelled", tracking_number="")),
            (changed(status="shipped"), PROCESSING),
            (changed(status="cancelled", tracking_number=""), PROCESSING),
        ],
    )
    def test_status_only_moves_forward_and_delivered_and_cancelled_are_final(self, before, after):
        upsert(before)
        assert refusal(after).code is ConflictCode.STATUS_BACKWARDS
        assert Order.objects.get().status == before["status"]

    def test_forward_moves_apply(self):
        upsert(PROCESSING)
        for status in (changed(status="shipped"), DELIVERED):
            _, outcome = upsert(status)
            assert outcome is UpsertOutcome.UPDATED
        assert Order.objects.get().status == OrderStatus.DELIVERED

    def test_the_shop_cannot_cancel_an_order_with_returns_that_are_not_closed(self):
        order, _ = upsert(PROCESSING)
        # An order an older import moved back past its delivery.
        record = ReturnRecordFactory.create(order=order)
        cancelled = changed(status="cancelled", tracking_number="")
        conflict = refusal(cancelled)
        assert conflict.code is ConflictCode.OPEN_RETURNS and record.rma_number in conflict.message
        type(record).objects.filter(pk=record.pk).update(status=ReturnStatus.REJECTED)
        assert upsert(cancelled)[1] is UpsertOutcome.UPDATED

    def test_an_address_changed_here_is_not_put_back_but_newer_news_from_the_shop_wins(self):
        order, _ = upsert(PROCESSING)
        order_shipping_address_change(order=order, address=NEW_HOME)
        assert refusal(PROCESSING).code is ConflictCode.ADDRESS_CHANGED_HERE
        order.refresh_from_db()
        assert order.ship_line1 == "9 Lake Shore Drive"
        moved_again = {**ADA["shipping_address"], "line1": "2 Oak Ave"}
        order, outcome = upsert(
            changed(status="processing", tracking_number="", shipping_address=moved_again)
        )
        assert (order.ship_line1, outcome) == ("2 Oak Ave", UpsertOutcome.UPDATED)

    def test_a_version_without_an_address_keeps_the_one_changed_here_and_applies_the_rest(self):
        order, _ = upsert(PROCESSING)
        order_shipping_address_change(order=order, address=NEW_HOME)
        without = {name: value for name, value in DELIVERED.items() if name != "shipping_address"}
        _, outcome = upsert(without)
        order.refresh_from_db()
        assert (outcome, order.status) == (UpsertOutcome.UPDATED, "delivered")
        address = shipping_address_shape(order=order)
        assert address is not None and address["line1"] == "9 Lake Shore Drive"

    def test_an_address_the_shop_dated_before_the_change_here_is_refused(self):
        order, _ = upsert(PROCESSING)
        order_shipping_address_change(order=order, address=NEW_HOME)
        before_it = (timezone.now() - timedelta(hours=1)).isoformat()
        elsewhere = {**ADA["shipping_address"], "line1": "2 Oak Ave"}
        sent = changed(
            status="processing", tracking_number="", shipping_address=elsewhere, updated_at=before_it
        )
        assert refusal(sent).code is ConflictCode.ADDRESS_CHANGED_HERE

    def test_a_version_older_by_the_shops_own_time_is_stale_and_a_newer_one_applies(self):
        upsert(changed(updated_at="2026-04-02T10:00:00+02:00"))
        conflict = refusal(changed(total="1.00", updated_at="2026-04-02T07:59:59Z"))
        assert conflict.code is ConflictCode.STALE
        assert Order.objects.get().total == Decimal("42.98")
        order, outcome = upsert(changed(total="1.00", updated_at="2026-04-02T08:00:01Z"))
        assert (order.total, outcome) == (Decimal("1.00"), UpsertOutcome.UPDATED)
        # The shop's clock moving on alone is kept: the version between is stale now.
        upsert(changed(total="1.00", updated_at="2026-04-03T00:00:00Z"))
        assert refusal(changed(total="2.00", updated_at="2026-04-02T12:00:00Z")).code is ConflictCode.STALE

    def test_a_shop_time_far_ahead_of_ours_is_refused_by_field_and_cannot_make_later_versions_stale(self):
        upsert(changed(updated_at="2026-04-02T10:00:00Z"))
        assert problems(changed(customer_name="Ada R.", updated_at="9999-12-30T00:00:00Z")) == {
            "updated_at": "must not be more than 10 minutes ahead of the time now: check the shop's clock "
            "and time zone"
        }
        # Two clocks a little apart are not a bad value.
        _, outcome = upsert(
            changed(total="1.00", updated_at=(timezone.now() + timedelta(minutes=9)).isoformat())
        )
        assert outcome is UpsertOutcome.UPDATED
        assert "updated_at" in problems(
            changed(updated_at=(timezone.now() + timedelta(minutes=11)).isoformat())
        )

    @pytest.mark.parametrize(
        "sent", ["2026-04-02", "2026-04-02T10:00:00", "yesterday", "9999-12-31T23:59:59-23:59", 17]
    )
    def test_the_shops_time_must_be_a_time_with_its_zone(self, sent):
        assert problems(changed(updated_at=sent)) == {
            "updated_at": "must be a time like 2026-04-01T09:30:00Z, with its time zone"
        }


# The shop sent the order in two parcels: Dune first, then one of the two Gruffalos; one still to go.
PARCELS = [
    {"carrier": "UPS", "tracking_number": "1Z999AA10123456784", "tracking_url": "https://ups.example/1Z9",
     "shipped_on": "2026-04-02", "delivered_on": "2026-04-05", "lines": [{"line_number": 1, "quantity": 1}]},
    {"carrier": "USPS", "tracking_number": "9400111899223344556677", "shipped_on": "2026-04-06",
     "lines": [{"line_number": 2, "quantity": 1}]},
]  # fmt: skip


@pytest.mark.django_db
class TestShipments:
    def test_an_order_shipped_in_parts_keeps_each_parcel_with_its_lines(self):
        order, outcome = upsert(changed(shipments=PARCELS))
        assert outcome == UpsertOutcome.CREATED
        kept = [
            (parcel.number, parcel.carrier, parcel.tracking_number, parcel.delivered_on is not None,
             [(line.item.line_number, line.quantity) for line in parcel.lines.all()])
            for parcel in order.shipments.all()
        ]  # fmt: skip
        assert kept == [(1, "UPS", "1Z999AA10123456784", True, [(1, 1)]),
                        (2, "USPS", "9400111899223344556677", False, [(2, 1)])]  # fmt: skip

    def test_the_shops_next_version_replaces_the_parcels_and_the_same_one_changes_nothing(self):
        upsert(changed(shipments=PARCELS))
        assert upsert(changed(shipments=PARCELS))[1] == UpsertOutcome.UNCHANGED
        both = [PARCELS[0], {**PARCELS[1], "lines": [{"line_number": 2, "quantity": 2}]}]
        order, outcome = upsert(changed(shipments=both))
        assert outcome == UpsertOutcome.UPDATED
        assert [line.quantity for line in order.shipments.get(number=2).lines.all()] == [2]
        assert upsert(changed())[1] == UpsertOutcome.UNCHANGED  # left out (a CSV row): kept
        assert upsert(changed(shipments=[]))[1] == UpsertOutcome.UPDATED
        assert not order.shipments.exists()

    @pytest.mark.parametrize(
        ("shipments", "problem"),
        [
            ([{**PARCELS[0], "lines": [{"line_number": 7, "quantity": 1}]}],
             "must name only lines of the order (line 7 is not one)"),
            ([PARCELS[1], {**PARCELS[1], "lines": [{"line_number": 2, "quantity": 2}]}],
             "must not count more of line 2 than the order has"),
            ([{**PARCELS[0], "lines": []}], None),
            ([{**PARCELS[0], "delivered_on": "2026-04-01"}], None),
            ([{**PARCELS[0], "tracking_url": "javascript:alert(1)"}], None),
        ],
    )  # fmt: skip
    def test_parcels_the_order_cannot_have_are_refused_by_field(self, shipments, problem):
        found = problems(changed(shipments=shipments))
        assert found
        if problem:
            assert found == {"shipments": problem}
        assert not Order.objects.exists()

    def test_an_order_still_processing_has_no_parcels(self):
        assert problems(changed(status="processing", tracking_number="", shipments=PARCELS[:1])) == {
            "shipments": "must be empty while the order is processing"
        }


@pytest.mark.django_db
class TestRefunds:
    def test_the_shops_refunds_are_kept_with_their_lines_and_replaced_by_its_next_version(self):
        refunds = [{"amount": "8.99", "refunded_on": "2026-04-07", "reason": "damaged",
                    "lines": [{"line_number": 2, "quantity": 1}]}, {"amount": "5.00"}]  # fmt: skip
        order, _ = upsert(changed(refunds=refunds))
        kept = [
            (r.amount, r.refunded_on and r.refunded_on.isoformat(), r.reason,
             [(line.item.line_number, line.quantity) for line in r.lines.all()])
            for r in order.refunds.all()
        ]  # fmt: skip
        assert kept == [(Decimal("8.99"), "2026-04-07", "damaged", [(2, 1)]), (Decimal("5.00"), None, "", [])]
        assert upsert(changed(refunds=refunds))[1] == UpsertOutcome.UNCHANGED
        assert upsert(changed(refunds=refunds[:1]))[1] == UpsertOutcome.UPDATED
        assert order.refunds.count() == 1

    def test_a_refund_of_lines_the_order_has_not_is_refused_by_field(self):
        found = problems(changed(refunds=[{"amount": "1.00", "lines": [{"line_number": 9, "quantity": 1}]}]))
        assert found == {"refunds": "must name only lines of the order (line 9 is not one)"}
        assert problems(changed(refunds=[{"amount": "-1.00"}])) == {
            "refunds[0].amount": "must be zero or more, with at most two decimals"
        }


@pytest.mark.django_db
class TestKinds:
    """A line the shop gave no kind gets the one its words say (BOOKLY_ITEM_KINDS), so the return
    policy's non-returnable kinds hold for what real shops sell."""

    @pytest.mark.parametrize(
        ("title", "variant", "kind"),
        [
            ("Dune", "eBook", "ebook"),
            ("Dune", "Paperback", ""),
            ("Project Hail Mary (Audiobook)", "", "audiobook"),
            ("Gift Card", "$25", "gift_card"),
            ("The Giftcardless Year", "", ""),  # a word, not a part of one
            ("Dune - Kindle Edition", "Default Title", "ebook"),
        ],
    )
    def test_the_kind_a_line_s_words_say(self, title, variant, kind):
        item = {**GRUFFALO, "title": title, "variant": variant, "category": ""}
        assert incoming_order_clean(number="BK-20001", data=changed(items=[item])).items[0].category == kind

    def test_a_kind_the_shop_gave_is_kept(self):
        item = {**GRUFFALO, "title": "Dune", "variant": "eBook", "category": "fiction"}
        assert (
            incoming_order_clean(number="BK-20001", data=changed(items=[item])).items[0].category == "fiction"
        )

    def test_an_ebook_read_from_its_variant_is_not_returnable(self):
        item = {**GRUFFALO, "title": "Dune", "variant": "eBook", "category": ""}
        order, _ = upsert(changed(status="delivered", delivered_on="2026-04-04", items=[item]))
        eligibility = order_return_eligibility(order=order, today=date(2026, 4, 10))
        assert not eligibility.items[0].returnable


@pytest.mark.multiprocess
def test_a_store_s_kinds_that_are_not_categories_stop_the_start(manage_py):
    result = manage_py("check", env={"BOOKLY_ITEM_KINDS": "magazine=magazine"})
    assert result.returncode != 0 and "BOOKLY_ITEM_KINDS: 'magazine=magazine' must be a kind" in result.stderr
