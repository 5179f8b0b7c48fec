import re
from datetime import UTC, date, datetime

import pytest
from django.utils import timezone

from orders.inbound import ORDER_EXAMPLE
from orders.intake import OrderConflict, UpsertOutcome, incoming_order_clean, order_upsert
from orders.models import (
    CaseStatus,
    DeliveryCase,
    DeliveryProblem,
    Order,
    OrderChangeKind,
    OrderSource,
    ReturnRecord,
)
from orders.services import delivery_case_open, return_record_create
from orders.shops import shop_own
from orders.tests.factories import OrderFactory

TODAY = date(2026, 4, 14)


@pytest.fixture
def demo_return(demo_data):
    order = Order.objects.get(number="BK-10042")
    return return_record_create(order=order, reason="Arrived with a torn cover", today=TODAY)


@pytest.mark.django_db
class TestOrderAdminForSupportStaff:
    def test_list_shows_orders_with_their_columns(self, demo_data, staff_client):
        page = staff_client.get("/admin/orders/order/")
        assert page.status_code == 200
        html = page.content.decode()
        for expected in ["BK-10042", "BK-10089", "BK-10103", "BK-9871", "Sarah Chen", "$36.98"]:
            assert expected in html

    def test_an_order_abroad_shows_its_amounts_in_its_currency_and_its_country(self, staff_client):
        address = {"ship_to": "Maria Souza", "ship_line1": "Av. Paulista 1000", "ship_city": "São Paulo",
                   "ship_state": "SP", "ship_zip": "01310-100", "ship_country": "BR"}  # fmt: skip
        order = OrderFactory.create(total="189.90", currency="BRL", **address)
        assert "R$189.90" in staff_client.get("/admin/orders/order/").content.decode()
        html = staff_client.get(f"/admin/orders/order/{order.pk}/change/").content.decode()
        assert "BRL" in html and "São Paulo-SP, 01310-100, Brazil" in html

    def test_an_order_paid_in_the_customers_currency_shows_the_shops_beside(self, staff_client):
        order = OrderFactory.create(total="115.90", currency="EUR", shop_total="124.36", shop_currency="USD")
        assert "€115.90 ($124.36)" in staff_client.get("/admin/orders/order/").content.decode()
        html = staff_client.get(f"/admin/orders/order/{order.pk}/change/").content.decode()
        assert "EUR" in html and "$124.36" in html

    def test_an_order_shipped_in_parts_shows_each_parcel_and_the_shops_refunds(self, staff_client):
        parcels = [
            {"carrier": "UPS", "tracking_number": "1Z999AA10123456784", "shipped_on": "2026-04-02",
             "lines": [{"line_number": 1, "quantity": 1}]},
        ]  # fmt: skip
        refunds = [{"amount": "5.00", "reason": "late", "lines": [{"line_number": 1, "quantity": 1}]}]
        data = {**ORDER_EXAMPLE, "shipments": parcels, "refunds": refunds}
        order, _ = order_upsert(
            incoming=incoming_order_clean(number="BK-20002", data=data),
            source=OrderSource.API,
            shop=shop_own(),
        )
        html = staff_client.get(f"/admin/orders/order/{order.pk}/change/").content.decode()
        assert "1 x line 1 (Dune)" in html and "1Z999AA10123456784" in html
        assert "$5.00" in html and "late" in html

    @pytest.mark.parametrize(
        ("query", "found", "absent"),
        [
            ("BK-9871", "Maria Gonzalez", "James Murphy"),
            ("james.murphy@example.com", "BK-10089", "BK-9871"),
        ],
    )
    def test_search_by_number_or_email(self, demo_data, staff_client, query, found, absent):
        html = staff_client.get("/admin/orders/order/", {"q": query}).content.decode()
        assert found in html
        assert absent not in html

    def test_filter_by_status(self, demo_data, staff_client):
        html = staff_client.get("/admin/orders/order/", {"status__exact": "delivered"}).content.decode()
        assert "BK-10042" in html and "BK-9871" in html
        assert "BK-10089" not in html

    def test_detail_shows_items_read_only(self, demo_data, staff_client):
        order = Order.objects.get(number="BK-10042")
        page = staff_client.get(f"/admin/orders/order/{order.pk}/change/")
        html = page.content.decode()
        assert page.status_code == 200
        assert "The Goldfinch" in html and "Sapiens" in html
        assert 'name="items-0-title"' not in html
        assert 'name="customer_email"' not in html
        assert 'name="_save"' not in html

    def test_cannot_change_add_or_delete_orders(self, demo_data, staff_client):
        order = Order.objects.get(number="BK-10042")
        change = staff_client.post(f"/admin/orders/order/{order.pk}/change/", {"customer_name": "Mallory"})
        add = staff_client.get("/admin/orders/order/add/")
        delete = staff_client.post(f"/admin/orders/order/{order.pk}/delete/", {"post": "yes"})
        assert (change.status_code, add.status_code, delete.status_code) == (403, 403, 403)
        order.refresh_from_db()
        assert order.customer_name == "Sarah Chen"

    def test_even_a_superuser_changes_status_and_address_only_through_the_services(
        self, demo_data, superuser_client
    ):
        order = Order.objects.get(number="BK-10103")
        html = superuser_client.get(f"/admin/orders/order/{order.pk}/change/").content.decode()
        superuser_client.post(
            f"/admin/orders/order/{order.pk}/change/",
            {"status": "cancelled", "ship_line1": "1 Elsewhere", "customer_name": "Sarah Chen"},
        )
        assert 'name="status"' not in html and 'name="ship_line1"' not in html
        assert superuser_client.get("/admin/orders/order/add/").status_code == 403
        order.refresh_from_db()
        assert (order.status, order.ship_line1) == ("processing", "418 Maple Avenue")

    def test_frozen_clock_notice_is_shown(self, demo_data, staff_client):
        html = staff_client.get("/admin/").content.decode()
        assert "The store's clock is frozen at 2026-04-14" in html

    def test_no_notice_on_the_real_clock(self, demo_data, staff_client, settings):
        settings.BOOKLY_TODAY = None
        html = staff_client.get("/admin/").content.decode()
        assert "store-clock-notice" not in html


@pytest.mark.django_db
class TestReturnAdminForSupportStaff:
    def test_list_shows_the_return(self, demo_return, staff_client):
        html = staff_client.get("/admin/orders/returnrecord/").content.decode()
        assert demo_return.rma_number in html
        assert "BK-10042" in html
        assert "sarah.chen@example.com" in html

    @pytest.mark.parametrize("query", ["rma", "BK-10042", "SARAH.CHEN@example.com"])
    def test_search_by_rma_order_or_email(self, demo_return, staff_client, query):
        query = demo_return.rma_number if query == "rma" else query
        html = staff_client.get("/admin/orders/returnrecord/", {"q": query}).content.decode()
        assert demo_return.rma_number in html

    def test_search_for_another_customer_finds_nothing(self, demo_return, staff_client):
        html = staff_client.get("/admin/orders/returnrecord/", {"q": "maria.gonzalez"}).content.decode()
        assert demo_return.rma_number not in html

    def test_filter_by_status(self, demo_return, staff_client):
        initiated = staff_client.get("/admin/orders/returnrecord/", {"status__exact": "initiated"})
        refunded = staff_client.get("/admin/orders/returnrecord/", {"status__exact": "refunded"})
        assert demo_return.rma_number in initiated.content.decode()
        assert demo_return.rma_number not in refunded.content.decode()

    def test_detail_is_read_only_and_lists_items(self, demo_return, staff_client):
        page = staff_client.get(f"/admin/orders/returnrecord/{demo_return.pk}/change/")
        html = page.content.decode()
        assert page.status_code == 200
        assert "Arrived with a torn cover" in html
        assert "The Goldfinch" in html and "Sapiens" in html
        assert '<select name="status"' not in html and 'name="reason"' not in html
        assert 'name="_save"' not in html

    def test_cannot_change_add_or_delete_returns(self, demo_return, staff_client):
        change = staff_client.post(
            f"/admin/orders/returnrecord/{demo_return.pk}/change/", {"status": "refunded"}
        )
        add = staff_client.get("/admin/orders/returnrecord/add/")
        delete = staff_client.post(f"/admin/orders/returnrecord/{demo_return.pk}/delete/", {"post": "yes"})
        assert (change.status_code, add.status_code, delete.status_code) == (403, 403, 403)
        assert ReturnRecord.objects.get().status == "initiated"

    def test_even_a_superuser_cannot_edit_a_return_in_admin(self, demo_return, superuser_client):
        response = superuser_client.post(
            f"/admin/orders/returnrecord/{demo_return.pk}/change/", {"status": "refunded"}
        )
        assert response.status_code == 403
        assert ReturnRecord.objects.get().status == "initiated"


@pytest.mark.django_db
def test_anonymous_visitor_is_sent_to_login(demo_data, client):
    response = client.get("/admin/orders/order/")
    assert response.status_code == 302
    assert response["Location"].startswith("/admin/login/")


@pytest.mark.django_db
def test_staff_without_the_group_sees_no_orders(demo_data, client, django_user_model):
    django_user_model.objects.create_user(username="temp", password="temp-pass-1234", is_staff=True)
    client.post("/admin/login/", {"username": "temp", "password": "temp-pass-1234"})
    assert client.get("/admin/orders/order/").status_code == 403


@pytest.mark.django_db
class TestReturnLifecycleInAdmin:
    def _status(self, client, record, status, **more):
        body = {"status": status, "confirm": "yes", **more}
        return client.post(f"/admin/orders/returnrecord/{record.pk}/status/", body, follow=True)

    def test_the_page_offers_only_the_moves_the_rules_allow(self, demo_return, staff_client):
        html = staff_client.get(f"/admin/orders/returnrecord/{demo_return.pk}/change/").content.decode()
        offered = re.findall(r'name="status" value="(\w+)"', html)
        confirmed_first = re.findall(r"/status/\?status=(\w+)", html)
        assert (offered, confirmed_first) == (["label_sent"], ["rejected", "cancelled"])

    def test_staff_move_a_return_along_and_each_move_is_recorded(self, demo_return, staff_client):
        for status in ("label_sent", "received", "refunded"):
            page = self._status(staff_client, demo_return, status)
        html = page.content.decode()
        assert f"Return {demo_return.rma_number} moved to Refunded. We emailed the customer." in html
        assert ReturnRecord.objects.get().status == "refunded"
        assert len(re.findall(r'field-changed_by_name">\s*<p>agent</p>', html)) == 3
        assert 'name="status" value=' not in html  # refunded is final: no moves left

    def test_a_final_move_is_confirmed_first_and_a_rejection_needs_its_reason(
        self, demo_return, staff_client
    ):
        url = f"/admin/orders/returnrecord/{demo_return.pk}/status/"
        confirm = staff_client.get(f"{url}?status=rejected").content.decode()
        unconfirmed = staff_client.post(url, {"status": "rejected", "note": "Used"}).content.decode()
        without_reason = self._status(staff_client, demo_return, "rejected").content.decode()
        assert "it can never move again" in confirm and 'name="note"' in confirm
        assert "Yes, move it to Rejected" in unconfirmed  # a POST without the confirmation only asks
        assert "Say why the return is rejected" in without_reason
        assert ReturnRecord.objects.get().status == "initiated"

        html = self._status(
            staff_client, demo_return, "rejected", note="The copy came back used."
        ).content.decode()
        assert "moved to Rejected" in html and "The copy came back used." in html
        assert ReturnRecord.objects.get().status == "rejected"

    def test_a_move_the_rules_refuse_says_why_and_changes_nothing(self, demo_return, staff_client):
        html = self._status(staff_client, demo_return, "refunded").content.decode()
        assert "is initiated, so it cannot become refunded. From initiated it can go to" in html
        assert ReturnRecord.objects.get().status == "initiated"

    def test_two_staff_pressing_at_once_the_second_is_told_it_already_moved(self, demo_return, staff_client):
        self._status(staff_client, demo_return, "cancelled", note="Customer changed their mind")
        html = self._status(staff_client, demo_return, "cancelled", note="Again").content.decode()
        assert "is cancelled, so it cannot become cancelled. Cancelled is final." in html
        assert demo_return.status_changes.count() == 1

    def test_an_unknown_status_or_a_get_changes_nothing(self, demo_return, staff_client):
        assert "Choose a status" in self._status(staff_client, demo_return, "lost_in_space").content.decode()
        assert staff_client.get(f"/admin/orders/returnrecord/{demo_return.pk}/status/").status_code == 405
        assert (
            staff_client.get(
                f"/admin/orders/returnrecord/{demo_return.pk}/status/?status=label_sent"
            ).status_code
            == 405
        )
        assert ReturnRecord.objects.get().status == "initiated"

    def test_staff_outside_the_group_cannot_move_returns(self, demo_return, client, django_user_model):
        django_user_model.objects.create_user(username="intern", password="intern-pass-1234", is_staff=True)
        client.post("/admin/login/", {"username": "intern", "password": "intern-pass-1234"})
        assert self._status(client, demo_return, "label_sent").status_code == 403
        assert ReturnRecord.objects.get().status == "initiated"


@pytest.mark.django_db
class TestStaffStartAReturn:
    def _start(self, client, number, titles, reason="Arrived damaged", note=""):
        order = Order.objects.get(number=number)
        items = [item.pk for item in order.items.all() if item.title in titles]
        body = {"items": items, "reason": reason, "exception_note": note}
        return client.post(f"/admin/orders/order/{order.pk}/return/", body, follow=True)

    def test_support_staff_start_a_return_within_the_policy_from_the_orders_page(
        self, demo_data, staff_client
    ):
        order_page = staff_client.get(
            f"/admin/orders/order/{Order.objects.get(number='BK-10042').pk}/change/"
        )
        processing = staff_client.get(
            f"/admin/orders/order/{Order.objects.get(number='BK-10103').pk}/change/"
        )
        assert 'id="start-return"' in order_page.content.decode()
        assert 'id="start-return"' not in processing.content.decode()  # not delivered: nothing to return
        html = self._start(staff_client, "BK-10042", ["Sapiens"]).content.decode()

        record = ReturnRecord.objects.get()
        assert f"Return {record.rma_number} started for Sapiens." in html
        assert record.created_by is not None
        assert (record.created_by.username, record.exception_note) == ("agent", "")
        assert [item.title for item in record.items.all()] == ["Sapiens"]

    def test_after_the_window_support_staff_are_told_why_and_nothing_is_started(
        self, demo_data, staff_client
    ):
        html = self._start(staff_client, "BK-9871", ["The Midnight Library"], note="").content.decode()
        assert "last day to start a return was" in html
        assert 'name="exception_note"' not in html  # theirs is no permission to grant one
        assert not ReturnRecord.objects.exists()

    def test_a_note_without_the_permission_is_refused(self, demo_data, staff_client):
        html = self._start(
            staff_client, "BK-9871", ["The Midnight Library"], note="I say so"
        ).content.decode()
        assert "Only staff who may grant exceptions" in html
        assert not ReturnRecord.objects.exists()

    def test_who_may_grant_starts_one_beyond_the_policy_with_a_note(self, demo_data, superuser_client):
        refused = self._start(superuser_client, "BK-9871", ["The Midnight Library"]).content.decode()
        assert "To grant it anyway, say why in the exception note." in refused
        html = self._start(
            superuser_client, "BK-9871", ["The Midnight Library"], note="Courier lost it for weeks"
        ).content.decode()

        record = ReturnRecord.objects.get()
        assert (record.exception_note, record.order.number) == ("Courier lost it for weeks", "BK-9871")
        assert "Courier lost it for weeks" in html  # shown on the return's page

    def test_items_already_in_an_open_return_are_refused_by_name(self, demo_return, staff_client):
        html = self._start(staff_client, "BK-10042", ["Sapiens"]).content.decode()
        assert "already part of an open return" in html
        assert ReturnRecord.objects.count() == 1

    def test_staff_outside_the_group_cannot_start_returns(self, demo_data, client, django_user_model):
        django_user_model.objects.create_user(username="intern", password="intern-pass-1234", is_staff=True)
        client.post("/admin/login/", {"username": "intern", "password": "intern-pass-1234"})
        assert self._start(client, "BK-10042", ["Sapiens"]).status_code == 403
        assert not ReturnRecord.objects.exists()


def test_the_email_outbox_shows_what_a_mail_server_refused_read_only(demo_data, superuser_client):
    from orders.models import CustomerEmail

    order = Order.objects.get(number="BK-10103")
    CustomerEmail.objects.create(
        order=order,
        to=order.customer_email,
        subject="Your order BK-10103 is cancelled",
        body="...",
        attempts=3,
        last_error="ConnectionRefusedError",
    )
    html = superuser_client.get("/admin/orders/customeremail/").content.decode()
    assert "Your order BK-10103 is cancelled" in html and "ConnectionRefusedError" in html
    assert superuser_client.get("/admin/orders/customeremail/add/").status_code == 403


def test_support_staff_do_not_read_the_email_outbox(demo_data, staff_client):
    assert staff_client.get("/admin/orders/customeremail/").status_code == 403


def test_a_final_move_the_rules_refuse_offers_no_confirmation(demo_return, staff_client):
    html = staff_client.get(
        f"/admin/orders/returnrecord/{demo_return.pk}/status/?status=refunded", follow=True
    )
    assert "can no longer move there" in html.content.decode()
    assert ReturnRecord.objects.get().status == "initiated"


def test_a_reason_too_long_for_an_email_is_refused(demo_return, staff_client):
    body = {"status": "rejected", "confirm": "yes", "note": "x" * 1001}
    html = staff_client.post(f"/admin/orders/returnrecord/{demo_return.pk}/status/", body).content.decode()
    assert "Keep the reason to 1000 characters" in html
    assert ReturnRecord.objects.get().status == "initiated"


@pytest.mark.django_db
class TestDeliveryCasesInAdmin:
    @pytest.fixture
    def case(self, demo_data):
        order = Order.objects.get(number="BK-10042")
        return delivery_case_open(
            order=order,
            problem=DeliveryProblem.DAMAGED,
            items=[order.items.get(title="Sapiens")],
            details="torn",
        )[0]

    def test_support_staff_see_open_cases_first_with_their_order_and_problem(self, case, staff_client):
        resolved = DeliveryCase.objects.create(
            order=case.order,
            problem=DeliveryProblem.LATE,
            status=CaseStatus.RESOLVED,
            resolution="Sorry",
            resolved_at=case.created_at,
        )
        html = staff_client.get("/admin/orders/deliverycase/").content.decode()
        assert html.index(f"Case {case.pk}:") < html.index(f"Case {resolved.pk}:")
        assert "BK-10042" in html and "Arrived damaged" in html

    def test_the_case_page_shows_the_books_and_the_customers_words_read_only(self, case, staff_client):
        page = staff_client.get(f"/admin/orders/deliverycase/{case.pk}/change/")
        html = page.content.decode()
        assert page.status_code == 200
        assert "Sapiens" in html and "torn" in html
        assert 'name="details"' not in html and 'name="_save"' not in html
        assert 'id="resolve-case"' in html

    def test_the_orders_page_lists_its_cases(self, case, staff_client):
        html = staff_client.get(f"/admin/orders/order/{case.order_id}/change/").content.decode()
        assert f"/admin/orders/deliverycase/{case.pk}/change/" in html

    def test_staff_resolve_a_case_and_the_customer_is_emailed_their_words(
        self, case, staff_client, mailoutbox, django_capture_on_commit_callbacks
    ):
        mailoutbox.clear()
        with django_capture_on_commit_callbacks(execute=True):
            response = staff_client.post(
                f"/admin/orders/deliverycase/{case.pk}/resolve/", {"resolution": "A new copy is on its way."}
            )
        assert response.status_code == 302
        case.refresh_from_db()
        assert case.status == "resolved" and case.resolved_by.username == "agent"
        (sent,) = mailoutbox
        assert "A new copy is on its way." in sent.body
        page = staff_client.get(f"/admin/orders/deliverycase/{case.pk}/change/").content.decode()
        assert 'id="resolve-case"' not in page  # nothing left to resolve

    def test_resolving_without_saying_what_was_done_is_refused_and_changes_nothing(self, case, staff_client):
        page = staff_client.post(f"/admin/orders/deliverycase/{case.pk}/resolve/", {"resolution": "   "})
        assert page.status_code == 200
        assert "Say what was done about it" in page.content.decode()
        case.refresh_from_db()
        assert case.status == "open"

    def test_a_resolution_too_long_for_an_email_is_refused_and_kept_in_the_box(self, case, staff_client):
        words = "word " * 500
        page = staff_client.post(f"/admin/orders/deliverycase/{case.pk}/resolve/", {"resolution": words})
        html = page.content.decode()
        assert "Keep it to 2000 characters" in html and "word word word" in html
        case.refresh_from_db()
        assert case.status == "open"

    def test_a_get_resolves_nothing(self, case, staff_client):
        assert staff_client.get(f"/admin/orders/deliverycase/{case.pk}/resolve/").status_code == 405

    def test_staff_outside_the_group_cannot_see_or_resolve_cases(self, case, client, django_user_model):
        outsider = django_user_model.objects.create_user("outsider", password="pw-outsider-1", is_staff=True)
        client.force_login(outsider)
        assert client.get("/admin/orders/deliverycase/").status_code == 403
        resolve = client.post(f"/admin/orders/deliverycase/{case.pk}/resolve/", {"resolution": "x"})
        assert resolve.status_code == 403
        case.refresh_from_db()
        assert case.status == "open"


def test_the_admin_home_counts_the_open_delivery_cases_and_links_to_them(demo_data, staff_client):
    order = Order.objects.get(number="BK-10089")
    delivery_case_open(order=order, problem=DeliveryProblem.NOT_ARRIVED, items=None, details="")
    html = staff_client.get("/admin/").content.decode()
    assert "<strong>1</strong> delivery problem to resolve" in html
    listed = staff_client.get("/admin/orders/deliverycase/", {"status__exact": "open"})
    assert listed.status_code == 200 and "BK-10089" in listed.content.decode()


def test_staff_see_where_an_order_came_from_and_filter_by_it(demo_data, staff_client):
    data = {
        "customer_name": "Ada Reader",
        "customer_email": "ada@example.com",
        "status": "shipped",
        "ordered_on": "2026-04-01",
        "tracking_number": "1Z999AA10123456799",
        "carrier": "UPS",
        "total": "24.99",
        "items": [
            {"line_number": 1, "title": "Dune", "unit_price": "24.99", "quantity": 1, "category": "fiction"}
        ],
    }
    order, _ = order_upsert(
        incoming=incoming_order_clean(number="BK-20001", data=data), source=OrderSource.API, shop=shop_own()
    )

    page = staff_client.get(f"/admin/orders/order/{order.pk}/change/").content.decode()
    assert "Store API" in page and "UPS" in page
    listed = staff_client.get("/admin/orders/order/", {"source__exact": "api"}).content.decode()
    assert "BK-20001" in listed and "BK-10042" not in listed


@pytest.mark.django_db
@pytest.mark.parametrize(("login", "may"), [("superuser_client", True), ("staff_client", False)])
def test_staff_who_may_change_orders_accept_the_shops_next_update_after_a_time_set_far_ahead(
    request, login, may
):
    """An order whose shop time a clock far ahead set (before intake refused such a time): every real
    version after it is stale until staff who may change orders accept the next one; support staff
    may not."""
    order, _ = order_upsert(
        incoming=incoming_order_clean(number="BK-20001", data=ORDER_EXAMPLE),
        source=OrderSource.API,
        shop=shop_own(),
    )
    Order.objects.filter(pk=order.pk).update(shop_updated_at=datetime(9999, 12, 30, tzinfo=UTC))
    real = incoming_order_clean(
        number="BK-20001", data={**ORDER_EXAMPLE, "total": "20.00", "updated_at": timezone.now().isoformat()}
    )
    with pytest.raises(OrderConflict):
        order_upsert(incoming=real, source=OrderSource.API, shop=shop_own())

    client = request.getfixturevalue(login)
    page = client.post(
        "/admin/orders/order/",
        {"action": "accept_shop_next_update", "_selected_action": [order.pk]},
        follow=True,
    )
    assert page.status_code == 200
    order.refresh_from_db()
    if not may:
        assert order.shop_updated_at is not None and order.shop_updated_at.year == 9999
        assert not order.changes.filter(kind=OrderChangeKind.SHOP_TIME_CLEARED).exists()
        return
    assert "The shop&#x27;s next update will be taken for BK-20001." in page.content.decode()
    change = order.changes.get(kind=OrderChangeKind.SHOP_TIME_CLEARED)
    assert change.changed_by is not None
    assert (change.before, change.changed_by.username) == (
        {"shop_updated_at": "9999-12-30T00:00:00Z"},
        "owner",
    )
    detail = client.get(f"/admin/orders/order/{order.pk}/change/").content.decode()
    assert "the shop&#x27;s time 9999-12-30T00:00:00Z forgotten" in detail
    _, outcome = order_upsert(incoming=real, source=OrderSource.API, shop=shop_own())
    assert outcome is UpsertOutcome.UPDATED
