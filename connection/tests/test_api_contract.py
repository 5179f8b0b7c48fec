"""The store API's contract: the OpenAPI document kept in the repository is the one served and valid
OpenAPI 3.1; Schemathesis, every check on, finds nothing against the running API; a client generated
from the document by openapi-python-client round-trips an order and a return; what GET answers can be
PUT back."""

import importlib
import json
import os
import subprocess
import sys
from datetime import date
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.test import Client
from openapi_spec_validator import validate

from connection.api.auth import PerKeyThrottle
from orders.inbound import ORDER_EXAMPLE
from orders.models import OWN_SHOP_NAME, Order, ReturnStatus
from orders.services import return_record_create, return_record_set_status
from orders.tests.factories import delivered_order

ROOT = Path(__file__).resolve().parents[2]
KEPT_SCHEMA = ROOT / "docs" / "store-api.openapi.json"
BIN = Path(sys.executable).parent
TODAY = date(2026, 4, 14)


def _served() -> dict:
    response = Client().get("/api/store/v1/schema", {"format": "json"})
    assert response.status_code == 200
    return json.loads(response.content)


def _key() -> str:
    out = StringIO()
    call_command(
        "store_api_key", "create", "Contract", "--shop", OWN_SHOP_NAME, stdout=out, stderr=StringIO()
    )
    return out.getvalue().strip()


@pytest.fixture
def unthrottled(monkeypatch):
    """Hundreds of requests a minute from one key: the per-key rate is not what is tested here."""
    monkeypatch.setattr(PerKeyThrottle, "THROTTLE_RATES", {"store_api": "100000/m"})


def test_the_schema_kept_in_the_repository_is_the_one_served():
    kept = json.loads(KEPT_SCHEMA.read_text())
    assert kept == _served(), (
        "docs/store-api.openapi.json is not the schema served: write it again with "
        "`DJANGO_SETTINGS_MODULE=bookly.settings_test .venv/bin/python manage.py spectacular "
        "--format openapi-json --file docs/store-api.openapi.json`"
    )


def test_the_schema_is_valid_openapi_3_1_with_a_body_for_every_answer_and_event(client):
    schema = _served()
    validate(schema)  # openapi-spec-validator: raises on any fault
    assert schema["openapi"].startswith("3.1")
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            for status, answer in operation["responses"].items():
                assert "application/json" in answer.get("content", {}), f"{method} {path} {status}"
            assert {"401", "429"} <= set(operation["responses"]), f"{method} {path}"
    components = schema["components"]["schemas"]
    assert {"Order", "OrderLine", "ShippingAddress", "Return", "ReturnLine", "Error"} <= set(components)
    assert all(components[name]["additionalProperties"] is False for name in ("Order", "Return", "Error"))
    webhooks = schema["webhooks"]
    for name, hook in webhooks.items():
        body = hook["post"]["requestBody"]["content"]["application/json"]["schema"]["$ref"]
        assert body.rsplit("/", 1)[1] in components, name


@pytest.mark.django_db
def test_what_get_answers_can_be_put_back_unchanged_and_its_time_is_not_the_shops(unthrottled):
    shop = Client(headers={"authorization": f"Bearer {_key()}"})
    url = "/api/store/v1/orders/BK-20001"
    assert shop.put(url, ORDER_EXAMPLE, content_type="application/json").status_code == 201
    read = shop.get(url).json()

    again = shop.put(url, read, content_type="application/json")

    assert (again.status_code, again.json()["outcome"]) == (200, "unchanged")
    # Bookly's updated_at, sent back as read, did not become the shop's time of the version: an older
    # version the shop sends later is still judged by the shop's own times.
    assert Order.objects.get(number="BK-20001").shop_updated_at is None
    answered = again.json()
    assert shop.put(url, answered, content_type="application/json").json()["outcome"] == "unchanged"

    # Read, then changed by the shop, then the old read sent back: refused whole, not applied over the
    # newer version, and its updated_at (Bookly's) never taken for the shop's time.
    newer = {**ORDER_EXAMPLE, "carrier": "USPS", "updated_at": "2026-04-02T09:30:00Z"}
    assert shop.put(url, newer, content_type="application/json").json()["outcome"] == "updated"
    stale = shop.put(url, read, content_type="application/json")
    assert (stale.status_code, stale.json()["error"]["reason"]) == (409, "changed_since_read")
    order = Order.objects.get(number="BK-20001")
    assert order.shop_updated_at is not None
    assert (order.carrier, order.shop_updated_at.isoformat()) == ("USPS", "2026-04-02T09:30:00+00:00")
    # Read again, it goes back (changed) as it should.
    fresh = {**shop.get(url).json(), "carrier": "DHL"}
    assert shop.put(url, fresh, content_type="application/json").json()["carrier"] == "DHL"


@pytest.mark.django_db
@pytest.mark.parametrize("moment", ["2026-13-01T00:00:00Z", "2026-04-01T00:00:00+25:00", "yesterday"])
def test_an_updated_at_that_is_no_real_time_is_named_by_field(unthrottled, moment):
    shop = Client(headers={"authorization": f"Bearer {_key()}"})
    body = {**ORDER_EXAMPLE, "updated_at": moment}
    answer = shop.put("/api/store/v1/orders/BK-20001", body, content_type="application/json")
    assert answer.status_code == 400
    assert [problem["field"] for problem in answer.json()["error"]["fields"]] == ["updated_at"]


@pytest.mark.django_db
def test_a_read_only_field_sent_other_than_read_is_named(unthrottled):
    shop = Client(headers={"authorization": f"Bearer {_key()}"})
    body = {**ORDER_EXAMPLE, "number": "BK-20002", "source": "mainframe", "outcome": "done"}
    answer = shop.put("/api/store/v1/orders/BK-20001", body, content_type="application/json")
    assert answer.status_code == 400
    assert [problem["field"] for problem in answer.json()["error"]["fields"]] == [
        "number",
        "source",
        "outcome",
    ]


@pytest.fixture(scope="module")
def generated_client(tmp_path_factory):
    """A Python client generated from the kept schema by openapi-python-client, importable."""
    out = tmp_path_factory.mktemp("client")
    config = out / "config.yaml"
    config.write_text("post_hooks: []\npackage_name_override: bookly_store_client\n")
    subprocess.run(
        [
            BIN / "openapi-python-client",
            "generate",
            "--path",
            KEPT_SCHEMA,
            "--output-path",
            out / "bookly_store_client",
            "--meta",
            "none",
            "--config",
            config,
        ],
        check=True,
        capture_output=True,
        timeout=120,
    )
    sys.path.insert(0, str(out))
    try:
        yield importlib.import_module("bookly_store_client")
    finally:
        sys.path.remove(str(out))
        for name in [name for name in sys.modules if name.startswith("bookly_store_client")]:
            del sys.modules[name]


@pytest.mark.multiprocess
@pytest.mark.django_db(transaction=True, serialized_rollback=True)  # the migrations' return policy
def test_a_client_generated_from_the_schema_round_trips_an_order_and_a_return(
    generated_client, live_server, unthrottled
):
    from bookly_store_client.api.orders import order_get, order_put, orders_list
    from bookly_store_client.api.returns import return_get, returns_list
    from bookly_store_client.models import Error, OrderPut, OrderWritten, Return
    from bookly_store_client.models import Order as OrderRead

    client = generated_client.AuthenticatedClient(base_url=live_server.url, token=_key())

    created = order_put.sync_detailed("BK-20001", client=client, body=OrderPut.from_dict(ORDER_EXAMPLE))
    assert created.status_code == 201 and isinstance(created.parsed, OrderWritten)
    read = order_get.sync("BK-20001", client=client)
    assert isinstance(read, OrderRead) and read.total == "24.99" and read.items[0].title == "Dune"
    put_back = order_put.sync("BK-20001", client=client, body=OrderPut.from_dict(read.to_dict()))
    assert put_back.outcome == "unchanged"
    assert [order.number for order in orders_list.sync(client=client).results] == ["BK-20001"]

    order = delivered_order(days_ago=3, today=TODAY)
    record = return_record_create(order=order, reason="Changed my mind", today=TODAY)
    return_record_set_status(return_record=record, status=ReturnStatus.LABEL_SENT)
    (listed,) = returns_list.sync(client=client).results
    got = return_get.sync(record.rma_number, client=client)
    assert isinstance(got, Return) and got.to_dict() == listed.to_dict()
    assert [(move.from_, move.to) for move in got.status_history] == [("initiated", "label_sent")]

    missing = order_get.sync_detailed("BK-99999", client=client)
    assert missing.status_code == 404 and isinstance(missing.parsed, Error)
    assert missing.parsed.error.code == "not_found"


@pytest.mark.multiprocess
@pytest.mark.slow
@pytest.mark.django_db(transaction=True, serialized_rollback=True)  # the migrations' return policy
def test_schemathesis_with_every_check_finds_nothing(live_server, unthrottled, tmp_path):
    """Schemathesis's CLI against the live API: every phase (examples, coverage, fuzzing, stateful) and
    every check (server errors, response schema, status codes, content type, headers, auth, unsupported
    methods, data the API should refuse or take), bounded, with a fixed seed so that CI is repeatable
    (`st run` by hand with another seed explores further: docs/store-developers.md)."""
    # A return to list, for the stateful phase to read by its number.
    return_record_create(order=delivered_order(days_ago=3, today=TODAY), reason="Torn", today=TODAY)
    run = subprocess.run(
        [
            BIN / "st",
            "--config-file",
            Path(__file__).with_name("schemathesis.toml"),
            "run",
            f"{live_server.url}/api/store/v1/schema",
            "--header",
            f"Authorization: Bearer {_key()}",
            "--checks",
            "all",
            "--max-examples",
            "15",
            "--seed",
            "20261127",
            "--request-timeout",
            "30",
            "--no-color",
            "--suppress-health-check",
            "all",
        ],
        capture_output=True,
        text=True,
        timeout=900,
        cwd=tmp_path,
        env={**os.environ, "SCHEMATHESIS_HOOKS": "", "NO_COLOR": "1"},
    )
    report = run.stdout[-6000:] + run.stderr[-2000:]
    assert run.returncode == 0, report
    assert " passed" in run.stdout and "generated" in run.stdout, report
