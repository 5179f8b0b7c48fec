"""Every event Bookly sends validates against its body's schema in the served OpenAPI document's
`webhooks` section: each change made the way it is made (services, the chat's handoff), each body as
the receiver gets it (connection.deliveries.event_body)."""

import json
from datetime import date

import pytest
from django.test import Client
from jsonschema import Draft202012Validator

from connection.deliveries import event_body
from orders.models import Event, EventType
from orders.tests.factories import one_change_of_each_kind
from support.testing.chat_client import ChatClient

TODAY = date(2026, 4, 14)


@pytest.mark.django_db
def test_every_event_validates_against_its_schema_in_the_openapi_webhooks(django_capture_on_commit_callbacks):
    document = json.loads(Client().get("/api/store/v1/schema", {"format": "json"}).content)
    with django_capture_on_commit_callbacks(execute=True):
        one_change_of_each_kind(today=TODAY)
        chat = ChatClient()
        assert chat.handoff({"reason": "Soaked"}).status_code == 200
        assert chat.handoff({"email": "sam@example.com"}).status_code == 200  # asked for after the handoff

    events = list(Event.objects.order_by("id"))
    assert {event.type for event in events} == set(EventType.values)  # one of each type at least
    for event in events:
        body = json.loads(event_body(event=event))
        schema = document["webhooks"][event.type]["post"]["requestBody"]["content"]["application/json"]
        validator = Draft202012Validator(
            {"components": document["components"], "$ref": schema["schema"]["$ref"]},
            format_checker=Draft202012Validator.FORMAT_CHECKER,
        )
        problems = [f"{'/'.join(map(str, error.absolute_path))}: {error.message}" for error in
                    validator.iter_errors(body)]  # fmt: skip
        assert problems == [], event.type
