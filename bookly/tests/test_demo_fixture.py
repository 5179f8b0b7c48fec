"""The demo fixture gives exactly the six scenarios the demo relies on."""

from datetime import date
from decimal import Decimal

import pytest
from django.core.management import call_command

from orders.models import Order, OrderItem, Refund, RefundLine, Shipment, ShipmentLine
from orders.selectors import EligibilityCode, order_get_for_customer, order_return_eligibility
from orders.services import return_record_create
from policies.models import PolicyEntry, ReturnPolicy

TODAY = date(2026, 4, 14)


def order_facts(number):
    order = Order.objects.get(number=number)
    items = [(i.title, i.author, i.unit_price, i.category) for i in order.items.all()]
    return order, items


@pytest.mark.django_db
def test_loads_exactly_six_orders_three_faq_entries_and_the_policy(demo_data):
    assert sorted(Order.objects.values_list("number", flat=True)) == [
        "BK-10042",
        "BK-10089",
        "BK-10103",
        "BK-10117",
        "BK-10123",
        "BK-9871",
    ]
    assert OrderItem.objects.count() == 10
    assert sorted(PolicyEntry.objects.values_list("topic", flat=True)) == [
        "password_reset",
        "returns_overview",
        "shipping",
    ]
    assert ReturnPolicy.objects.count() == 1


@pytest.mark.django_db
def test_sarah_has_a_delivered_order_inside_the_return_window(demo_data):
    order, items = order_facts("BK-10042")
    assert (order.customer_name, order.customer_email, order.status) == (
        "Sarah Chen",
        "sarah.chen@example.com",
        "delivered",
    )
    assert (TODAY - order.ordered_on).days == 20
    assert (TODAY - order.delivered_on).days == 15
    assert order.tracking_number == "1Z999AA10123456784"
    assert items == [
        ("The Goldfinch", "Donna Tartt", Decimal("16.99"), "fiction"),
        ("Sapiens", "Yuval Noah Harari", Decimal("19.99"), "nonfiction"),
    ]
    assert order.total == Decimal("36.98") == sum(i[2] for i in items)
    assert order_return_eligibility(order=order, today=TODAY).eligible


@pytest.mark.django_db
def test_james_has_a_shipped_order(demo_data):
    order, items = order_facts("BK-10089")
    assert (order.customer_name, order.customer_email, order.status) == (
        "James Murphy",
        "james.murphy@example.com",
        "shipped",
    )
    assert (TODAY - order.ordered_on).days == 4
    assert order.tracking_number == "1Z999AA10987654321"
    assert order.delivered_on is None
    assert items == [("Project Hail Mary", "Andy Weir", Decimal("18.99"), "fiction")]
    assert order_return_eligibility(order=order, today=TODAY).code == EligibilityCode.NOT_DELIVERED


@pytest.mark.django_db
def test_sarah_has_a_second_order_still_processing(demo_data):
    order, items = order_facts("BK-10103")
    assert (order.customer_name, order.customer_email, order.status) == (
        "Sarah Chen",
        "sarah.chen@example.com",
        "processing",
    )
    assert (TODAY - order.ordered_on).days == 1
    assert order.tracking_number == ""
    assert items == [("Tomorrow, and Tomorrow, and Tomorrow", "Gabrielle Zevin", Decimal("17.99"), "fiction")]
    assert Order.objects.filter(customer_email="sarah.chen@example.com").count() == 2


@pytest.mark.django_db
def test_maria_has_a_delivered_order_outside_the_window(demo_data):
    order, items = order_facts("BK-9871")
    assert (order.customer_name, order.customer_email, order.status) == (
        "Maria Gonzalez",
        "maria.gonzalez@example.com",
        "delivered",
    )
    assert (TODAY - order.ordered_on).days == 60
    assert (TODAY - order.delivered_on).days == 55
    assert order.tracking_number == "1Z999AA10555555555"
    assert items == [("The Midnight Library", "Matt Haig", Decimal("15.99"), "fiction")]
    assert order_return_eligibility(order=order, today=TODAY).code == EligibilityCode.WINDOW_EXPIRED


@pytest.mark.django_db
def test_return_policy_facts(demo_data):
    policy = ReturnPolicy.objects.get()
    assert policy.window_days == 30
    assert policy.refund_timeline_business_days == 7
    assert policy.refund_method == "the original payment method"
    assert sorted(policy.non_returnable_categories) == [
        "audiobook",
        "ebook",
        "gift_card",
        "personalized_item",
    ]
    assert "unread" in policy.condition_requirements and "original packaging" in policy.condition_requirements


@pytest.mark.django_db
def test_faq_texts_carry_the_facts(demo_data):
    shipping = PolicyEntry.objects.get(topic="shipping").text
    for fact in ("$25", "3 to 5 business days", "$9.99", "1 to 2 business days", "50 US states"):
        assert fact in shipping
    password = PolicyEntry.objects.get(topic="password_reset").text
    assert "Forgot password" in password and "24 hours" in password and "spam" in password
    overview = PolicyEntry.objects.get(topic="returns_overview").text
    assert "30 days" in overview and "7 business days" in overview
    assert all(entry.is_published for entry in PolicyEntry.objects.all())


@pytest.mark.django_db
def test_reloading_restores_edits_without_duplicating(demo_data):
    order = Order.objects.get(number="BK-10089")
    order.status = "delivered"
    order.delivered_on = TODAY
    order.save()
    item = OrderItem.objects.get(order__number="BK-10042", line_number=1)
    item.title = "Edited"
    item.save()
    PolicyEntry.objects.filter(topic="shipping").update(text="Edited by staff", is_published=False)
    ReturnPolicy.objects.update(window_days=90)

    call_command("loaddata", "demo", verbosity=0)

    assert Order.objects.count() == 6 and OrderItem.objects.count() == 10 and PolicyEntry.objects.count() == 3
    assert Shipment.objects.count() == 2 and ShipmentLine.objects.count() == 2
    assert Refund.objects.count() == 1 and RefundLine.objects.count() == 1
    assert Order.objects.get(number="BK-10089").status == "shipped"
    assert OrderItem.objects.get(order__number="BK-10042", line_number=1).title == "The Goldfinch"
    shipping = PolicyEntry.objects.get(topic="shipping")
    assert shipping.is_published and "$25" in shipping.text
    assert ReturnPolicy.objects.get().window_days == 30


@pytest.mark.django_db
def test_reload_and_clear_demo_returns_restore_a_returnable_demo(demo_data):
    order = order_get_for_customer(order_number="BK-10042", email="sarah.chen@example.com")
    assert order is not None
    return_record_create(order=order, reason="Damaged", today=TODAY)
    assert not order_return_eligibility(order=order, today=TODAY).eligible

    call_command("loaddata", "demo", verbosity=0)
    call_command("clear_demo_returns", verbosity=0)

    assert order_return_eligibility(order=order, today=TODAY).eligible


@pytest.mark.django_db
def test_daniel_s_shopify_order_came_in_two_parcels_and_a_refund(demo_data):
    order = Order.objects.get(number="BK-10117")
    assert (order.source, order.status) == ("shopify", "shipped")
    parcels = [
        (parcel.carrier, parcel.delivered_on is not None, [line.item.title for line in parcel.lines.all()])
        for parcel in order.shipments.all()
    ]
    assert parcels == [("UPS", True, ["The Hobbit"]), ("USPS", False, ["Dune"])]
    [refund] = order.refunds.all()
    assert (refund.amount, [line.item.title for line in refund.lines.all()]) == (Decimal("9.99"), ["Emma"])


@pytest.mark.django_db
def test_ana_s_woocommerce_order_is_in_brazil_in_reais_and_can_still_change(demo_data):
    order = Order.objects.get(number="BK-10123")
    assert (order.source, order.currency, order.ship_country, order.status) == (
        "woocommerce", "BRL", "BR", "processing",
    )  # fmt: skip
    assert order.total == sum(item.unit_price * item.quantity for item in order.items.all())
