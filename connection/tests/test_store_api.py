"""The store API as the shop's backend calls it: real HTTP requests through Django's test client, a
real key made by the management command, the database as the source of what is answered."""

import copy
import json
from datetime import timedelta
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.test import Client
from django.utils import timezone

from connection.api.auth import PerKeyThrottle
from connection.models import StoreApiKey
from orders.inbound import ORDER_EXAMPLE
from orders.intake import incoming_order_clean
from orders.models import OWN_SHOP_NAME, Order, OrderSource, ReturnRecord, ReturnStatus
from orders.selectors import ChangeCode
from orders.services import (
    OrderChangeNotAllowed,
    order_cancel,
    return_record_create,
    return_record_set_status,
)
from orders.shops import shop_own
from orders.tests.factories import OrderFactory
from store.clock import store_today

pytestmark = pytest.mark.django_db

# The example order as the JSON it is: a value of any kind under each name.
EXAMPLE: dict[str, Any] = ORDER_EXAMPLE


@pytest.fixture
def key() -> str:
    out = StringIO()
    # Our own shop's key: the demo's orders, which some tests read, are that shop's.
    call_command(
        "store_api_key", "create", "Test shop", "--shop", OWN_SHOP_NAME, stdout=out, stderr=StringIO()
    )
    return out.getvalue().strip()


@pytest.fixture
def shop(key) -> Client:
    return Client(headers={"authorization": f"Bearer {key}"})


def put(client, number, body, **kwargs):
    return client.put(
        f"/api/store/v1/orders/{number}", json.dumps(body), content_type="application/json", **kwargs
    )


class TestOrders:
    def test_a_new_order_is_created_then_replaced_then_unchanged(self, shop):
        created = put(shop, "BK-20001", ORDER_EXAMPLE)
        assert created.status_code == 201
        assert created.json()["outcome"] == "created"
        assert Order.objects.get(number="BK-20001").source == OrderSource.API

        delivered = {**ORDER_EXAMPLE, "status": "delivered", "delivered_on": "2026-04-04"}
        updated = put(shop, "BK-20001", delivered)
        assert (updated.status_code, updated.json()["outcome"], updated.json()["status"]) == (
            200,
            "updated",
            "delivered",
        )
        assert put(shop, "BK-20001", delivered).json()["outcome"] == "unchanged"

    def test_an_order_a_shop_platform_sent_is_not_written_over_by_the_store_api(self, shop):
        # In the key's shop: another shop's order of the number would be another order.
        OrderFactory.create(
            number="BK-20001", source=OrderSource.SHOPIFY, customer_email="ana@example.com", shop=shop_own()
        )
        answer = put(shop, "BK-20001", ORDER_EXAMPLE)
        error = answer.json()["error"]
        assert (answer.status_code, error["code"], error["reason"]) == (409, "order_conflict", "other_source")
        assert "only Shopify updates it" in error["message"]
        assert Order.objects.get(number="BK-20001").customer_email == "ana@example.com"

    def test_a_number_in_the_body_may_repeat_the_addresss_but_not_contradict_it(self, shop):
        assert put(shop, "BK-20001", {**ORDER_EXAMPLE, "number": "bk-20001"}).status_code == 201
        other = put(shop, "BK-20002", {**ORDER_EXAMPLE, "number": "BK-20001"})
        assert other.status_code == 400
        assert other.json()["error"]["fields"] == [
            {"field": "number", "problem": "must be the order number in the address, or left out"}
        ]
        assert not Order.objects.filter(number="BK-20002").exists()

    def test_an_order_is_read_back_in_the_shape_it_was_sent(self, shop):
        put(shop, "BK-20001", ORDER_EXAMPLE)
        read = shop.get("/api/store/v1/orders/bk-20001").json()
        assert {name: read[name] for name in ORDER_EXAMPLE} == ORDER_EXAMPLE
        assert read["number"] == "BK-20001" and read["source"] == "api"

    def test_an_unknown_order_is_a_404_in_the_apis_shape(self, shop):
        response = shop.get("/api/store/v1/orders/BK-99999")
        assert response.status_code == 404
        assert response.json() == {
            "error": {"code": "not_found", "message": "This key's shop has no order of that number."}
        }

    @pytest.mark.parametrize("path", ["/api/store/v1/orders/", "/api/store/v1/nothing", "/api/store/v1/"])
    def test_an_address_the_api_does_not_have_is_a_404_in_its_shape(self, client, path):
        for method in (client.get, client.post, client.put, client.delete):
            response = method(path)
            assert response.status_code == 404
            assert response["Content-Type"] == "application/json"
            assert response.json()["error"]["code"] == "not_found"
        if path.endswith("/"):
            assert "no trailing slash" in response.json()["error"]["message"]

    def test_a_refused_order_names_every_field_and_writes_nothing(self, shop):
        body: dict[str, Any] = copy.deepcopy(ORDER_EXAMPLE)  # as JSON: any value
        body.update(status="delivered", colour="red")
        body["items"][0]["unit_price"] = "-3"
        response = put(shop, "BK-20001", body)
        assert response.status_code == 400
        error = response.json()["error"]
        assert error["code"] == "invalid_order"
        assert {problem["field"] for problem in error["fields"]} == {
            "colour",
            "delivered_on",
            "items[0].unit_price",
        }
        assert not Order.objects.exists()

    @pytest.mark.parametrize(
        ("body", "content_type", "code", "http_status"),
        [
            ("{not json", "application/json", "invalid_json", 400),
            ("[1, 2]", "application/json", "invalid_order", 400),
            ("customer_name=Ada", "application/x-www-form-urlencoded", "unsupported_media_type", 415),
            ('{"x": "' + "y" * 5_000_000 + '"}', "application/json", "body_too_large", 413),
        ],
    )
    def test_odd_bodies_get_a_clear_error_in_the_apis_shape(
        self, shop, body, content_type, code, http_status
    ):
        response = shop.put("/api/store/v1/orders/BK-20001", body, content_type=content_type)
        assert (response.status_code, response.json()["error"]["code"]) == (http_status, code)
        assert not Order.objects.exists()

    def test_orders_that_changed_are_listed_oldest_change_first_a_page_at_a_time(self, shop):
        for number in ("BK-20001", "BK-20002", "BK-20003"):
            put(shop, number, ORDER_EXAMPLE)
        later = Order.objects.get(number="BK-20002").updated_at.isoformat()
        put(shop, "BK-20001", {**ORDER_EXAMPLE, "total": "20.00"})

        page = shop.get("/api/store/v1/orders", {"updated_since": later}).json()
        assert [order["number"] for order in page["results"]] == ["BK-20003", "BK-20001"]

    @pytest.mark.parametrize(
        "query",
        [
            {"updated_since": "yesterday"},
            {"updated_since": "2026-13-01T00:00:00Z"},
            {"updated_since": "9999-12-31T23:59:59-23:59"},  # past year 9999 in UTC
            {"cursor": "not-a-cursor"},
        ],
    )
    def test_a_parameter_that_does_not_fit_is_a_400_naming_it(self, shop, query):
        response = shop.get("/api/store/v1/orders", query)
        assert (response.status_code, response.json()["error"]["code"]) == (400, "invalid_parameter")

    def test_json_nested_past_the_parsers_depth_is_invalid_json(self, shop):
        response = shop.put("/api/store/v1/orders/BK-20001", "[" * 100_000, content_type="application/json")
        assert (response.status_code, response.json()["error"]["code"]) == (400, "invalid_json")


class TestNeverBackwards:
    """Issue 33's finding 1, as it happened: a delivery, three returns, then the shop's older export."""

    @pytest.fixture
    def delivered(self, shop):
        three = [{**EXAMPLE["items"][0], "line_number": n, "title": f"Book {n}"} for n in (1, 2, 3)]
        shipped = {**ORDER_EXAMPLE, "items": three, "updated_at": "2026-04-02T09:00:00Z"}
        assert put(shop, "BK-1044", shipped).status_code == 201
        today = str(store_today())
        newer = {
            **shipped,
            "status": "delivered",
            "delivered_on": today,
            "updated_at": "2026-04-05T12:00:00Z",
        }
        answer = put(shop, "BK-1044", newer)  # a version the shop made later still applies
        assert (answer.status_code, answer.json()["outcome"], answer.json()["status"]) == (
            200,
            "updated",
            "delivered",
        )
        order = Order.objects.get(number="BK-1044")
        records = [
            return_record_create(order=order, reason="Not for me", items=[item], today=store_today())
            for item in order.items.all()
        ]
        return_record_set_status(return_record=records[0], status=ReturnStatus.LABEL_SENT)
        return order

    def test_the_shops_older_export_is_refused_and_the_order_cannot_then_be_cancelled(
        self, delivered, tmp_path, superuser_client
    ):
        older = {**ORDER_EXAMPLE, "number": "BK-1044", "status": "processing", "tracking_number": ""}
        older["items"] = [{**EXAMPLE["items"][0], "line_number": n, "title": f"Book {n}"} for n in (1, 2, 3)]
        export = tmp_path / "older.jsonl"
        export.write_text(json.dumps(older) + "\n")
        out = StringIO()
        with pytest.raises(CommandError, match="1 orders were refused"):
            call_command("import_orders", str(export), stdout=out)
        assert out.getvalue().splitlines() == [
            "Created 0, updated 0, left 0 unchanged, refused 1.",
            "  line 1 (BK-1044): status would move the order back from delivered to processing: an "
            "order's status only moves forward (processing, shipped, delivered) and delivered is final",
        ]
        delivered.refresh_from_db()
        assert delivered.status == "delivered"

        with pytest.raises(OrderChangeNotAllowed) as refused:
            order_cancel(order=delivered)
        assert refused.value.code == ChangeCode.DELIVERED
        assert ReturnRecord.objects.filter(order=delivered).exclude(status="cancelled").count() == 3

        page = superuser_client.get(f"/admin/orders/order/{delivered.pk}/change/").content.decode()
        assert "Shop&#x27;s update refused" in page and "the shop (file import)" in page

    def test_the_store_api_answers_409_with_the_reason_and_changes_nothing(self, delivered, shop):
        older = {
            **ORDER_EXAMPLE,
            "status": "processing",
            "tracking_number": "",
            "updated_at": "2026-04-03T00:00:00Z",
        }
        older["items"] = [{**EXAMPLE["items"][0], "line_number": n, "title": f"Book {n}"} for n in (1, 2, 3)]
        answer = put(shop, "BK-1044", older)
        assert answer.status_code == 409
        error = answer.json()["error"]
        assert (error["code"], error["reason"], error["fields"][0]["field"]) == (
            "order_conflict",
            "stale",
            "updated_at",
        )
        assert error["message"].startswith("The order was not saved: updated_at is older than the version")
        assert shop.get("/api/store/v1/orders/BK-1044").json()["status"] == "delivered"


class TestKeys:
    def test_no_key_or_a_wrong_key_is_refused_and_nothing_is_written(self, key):
        anonymous = put(Client(), "BK-20001", ORDER_EXAMPLE)
        wrong = put(Client(headers={"authorization": f"Bearer {key[:-2]}xx"}), "BK-20001", ORDER_EXAMPLE)
        assert (anonymous.status_code, anonymous.json()["error"]["code"]) == (401, "not_authenticated")
        assert anonymous["WWW-Authenticate"].startswith("Bearer")
        assert (wrong.status_code, wrong.json()["error"]["code"]) == (401, "invalid_key")
        assert not Order.objects.exists()

    def test_a_staff_members_session_cookie_opens_nothing(self, demo_data, superuser_client):
        response = superuser_client.get("/api/store/v1/orders/BK-10042")
        assert response.status_code == 401

    def test_a_revoked_key_is_refused_and_the_key_is_kept_only_as_a_hash(self, key, shop):
        api_key = StoreApiKey.objects.get()
        assert key not in json.dumps(list(StoreApiKey.objects.values()), default=str)
        call_command("store_api_key", "revoke", api_key.prefix, stdout=StringIO())
        response = put(shop, "BK-20001", ORDER_EXAMPLE)
        assert (response.status_code, response.json()["error"]) == (
            401,
            {"code": "invalid_key", "message": "That API key was revoked: use the shop's current key."},
        )

    def test_a_key_revoked_while_its_request_runs_writes_nothing(self, shop, monkeypatch):
        from connection.api import views

        real_clean = views.incoming_order_clean

        def clean_then_revoked(**kwargs):
            StoreApiKey.objects.update(revoked=True)  # the superuser pressed "revoke" meanwhile
            return real_clean(**kwargs)

        monkeypatch.setattr(views, "incoming_order_clean", clean_then_revoked)
        response = put(shop, "BK-20001", ORDER_EXAMPLE)
        assert (response.status_code, response.json()["error"]["code"]) == (401, "invalid_key")
        assert not Order.objects.exists()

    def test_an_expired_key_is_refused(self, shop):
        StoreApiKey.objects.update(expiry_date=timezone.now() - timedelta(minutes=1))
        response = shop.get("/api/store/v1/orders")
        assert (response.status_code, response.json()["error"]) == (
            401,
            {"code": "invalid_key", "message": "That API key has expired: use the shop's current key."},
        )

    def test_a_keys_last_use_is_recorded(self, shop):
        shop.get("/api/store/v1/orders")
        assert StoreApiKey.objects.get().last_used_at is not None

    def test_wrong_keys_from_one_address_are_limited_and_a_right_key_is_never_counted(self, key, settings):
        settings.BOOKLY_STORE_API_KEY_FAILURES = "3/m"
        right = Client(headers={"authorization": f"Bearer {key}"})
        assert [right.get("/api/store/v1/orders").status_code for _ in range(5)] == [200] * 5
        guesses = [Client(headers={"authorization": f"Bearer {key[:-2]}{n:02d}"}) for n in range(5)]
        answers = [guess.get("/api/store/v1/orders") for guess in guesses]
        assert [answer.status_code for answer in answers] == [401, 401, 401, 429, 429]
        assert answers[3].json()["error"] == {
            "code": "rate_limited",
            "message": f"Too many wrong API keys from this address. Try again in {answers[3]['Retry-After']} "
            "seconds.",
        }
        # Another address is not held up by this one's guesses, nor is the right key from this one.
        other = guesses[0].get("/api/store/v1/orders", REMOTE_ADDR="198.51.100.7")
        assert other.status_code == 401
        assert right.get("/api/store/v1/orders").status_code == 200

    def test_a_rotation_never_locks_the_shop_out_the_old_keys_are_refused_by_reason_uncounted(
        self, key, settings
    ):
        """One worker still on the revoked key, one on a key that expired, behind the same address as
        the rest: each is told why, none counts as a guess, and the new key keeps working."""
        settings.BOOKLY_STORE_API_KEY_FAILURES = "3/m"
        call_command("store_api_key", "revoke", StoreApiKey.objects.get().prefix, stdout=StringIO())
        out = StringIO()
        call_command("store_api_key", "create", "Expired", stdout=out, stderr=StringIO())
        StoreApiKey.objects.filter(name="Expired").update(expiry_date=timezone.now() - timedelta(days=1))
        expired = out.getvalue().strip()
        call_command(
            "store_api_key", "create", "Our shop, new key", stdout=(out := StringIO()), stderr=StringIO()
        )
        new = Client(headers={"authorization": f"Bearer {out.getvalue().strip()}"})
        old = [Client(headers={"authorization": f"Bearer {sent}"}) for sent in (key, expired)]
        answers = [client.get("/api/store/v1/orders") for _ in range(5) for client in old]
        assert {(answer.status_code, answer.json()["error"]["code"]) for answer in answers} == {
            (401, "invalid_key")
        }
        assert new.get("/api/store/v1/orders").status_code == 200
        # The limit still holds for guesses from the same address.
        guesses = [Client(headers={"authorization": f"Bearer guessed{n}.{'x' * 32}"}) for n in range(4)]
        assert [guess.get("/api/store/v1/orders").status_code for guess in guesses] == [401, 401, 401, 429]

    def test_each_key_is_rate_limited_with_a_retry_after(self, shop, monkeypatch):
        monkeypatch.setattr(PerKeyThrottle, "THROTTLE_RATES", {"store_api": "2/m"})
        answers = [shop.get("/api/store/v1/orders") for _ in range(3)]
        assert [answer.status_code for answer in answers] == [200, 200, 429]
        assert answers[2].json()["error"]["code"] == "rate_limited" and "Retry-After" in answers[2]


class TestReturns:
    @pytest.fixture
    def record(self, demo_data):
        record = return_record_create(
            order=Order.objects.get(number="BK-10042"), reason="Torn", today=store_today()
        )
        return_record_set_status(return_record=record, status=ReturnStatus.LABEL_SENT)
        return record

    def test_a_return_is_read_with_its_lines_and_each_move(self, shop, record):
        read = shop.get(f"/api/store/v1/returns/{record.rma_number.lower()}").json()
        assert (read["rma_number"], read["order_number"], read["status"]) == (
            record.rma_number,
            "BK-10042",
            "label_sent",
        )
        assert [item["line_number"] for item in read["items"]] == [1, 2]
        assert [(move["from"], move["to"]) for move in read["status_history"]] == [
            ("initiated", "label_sent")
        ]

    def test_returns_that_moved_are_listed(self, shop, record):
        since = ReturnRecord.objects.get().updated_at
        assert shop.get("/api/store/v1/returns").json()["results"][0]["rma_number"] == record.rma_number
        later = shop.get("/api/store/v1/returns", {"updated_since": since.isoformat()}).json()
        assert later["results"] == []


def test_the_openapi_schema_describes_every_path(client):
    response = client.get("/api/store/v1/schema", HTTP_ACCEPT="application/json")
    assert response.status_code == 200
    paths = json.loads(response.content)["paths"]
    assert set(paths) >= {
        "/api/store/v1/orders",
        "/api/store/v1/orders/{number}",
        "/api/store/v1/returns",
        "/api/store/v1/returns/{rma_number}",
    }
    assert "bearer" in json.dumps(json.loads(response.content)["components"]).lower()


def test_the_readmes_example_order_is_the_one_the_api_documents_and_takes():
    readme = (Path(__file__).resolve().parents[2] / "docs" / "store-developers.md").read_text()
    body = readme.split("--data @- <<'JSON'\n", 1)[1].split("\nJSON\n", 1)[0]
    assert json.loads(body) == ORDER_EXAMPLE
    assert incoming_order_clean(number="BK-20001", data=json.loads(body))
