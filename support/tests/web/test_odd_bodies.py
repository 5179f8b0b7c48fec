"""Whatever a client posts, the chat answers in its own shape and stores nothing half-way."""

import json

import pytest
from django.conf import settings
from django.test import Client
from hypothesis import HealthCheck, example, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from support.models import ConversationMessage
from support.testing.chat_client import ChatClient

pytestmark = pytest.mark.usefixtures("demo_data", "offline")

CONTENT_TYPES = st.sampled_from(
    [
        "application/json",
        "application/json; charset=utf-8",
        "text/plain",
        "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=BoUnDaRy",
        "application/octet-stream",
        "",
    ]
)
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=30),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children, max_size=4)
    ),
    max_leaves=12,
)
BODIES = st.one_of(
    st.binary(max_size=300),
    st.text(max_size=300).map(str.encode),
    JSON_VALUES.map(lambda value: json.dumps(value).encode()),
    JSON_VALUES.map(lambda value: json.dumps({"message": value}).encode()),
    st.text(min_size=1, max_size=80).map(lambda words: json.dumps({"message": words}).encode()),
    st.integers(min_value=1, max_value=3000).map(lambda depth: b"[" * depth + b"]" * depth),
    st.text(max_size=60).map(lambda words: f"message={words}".encode()),
    st.text(max_size=60).map(
        lambda words: (
            f'--BoUnDaRy\r\nContent-Disposition: form-data; name="message"\r\n\r\n{words}\r\n--BoUnDaRy--\r\n'
        ).encode()
    ),
)
EXAMPLES = hypothesis_settings(
    max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


def _stored() -> int:
    return ConversationMessage.objects.count()


def _shown() -> int:
    """Messages the customer reads (a tool round in between stores calls and results they do not)."""
    return ConversationMessage.objects.exclude(visible_text="").count()


@EXAMPLES
@given(body=BODIES, content_type=CONTENT_TYPES)
@example(body=b"[" * 1500 + b"]" * 1500, content_type="application/json")  # the probe's 3 KB body
@example(body=b'{"message": "pw"}', content_type="application/json")  # a policy looked up on the way
@example(
    body=b'--BoUnDaRy\r\nContent-Disposition: form-data; name="message"\r\n\r\nhi\r\n--BoUnDaRy--\r\n',
    content_type="multipart/form-data; boundary=BoUnDaRy",
)
def test_the_api_answers_any_body_in_json_and_stores_a_message_only_with_its_reply(body, content_type):
    customer = ChatClient()
    before, shown_before = _stored(), _shown()
    response = customer.send_raw(body, content_type=content_type)
    assert response["Content-Type"] == "application/json"
    payload = response.json()
    if response.status_code == 200:
        assert isinstance(payload["reply"], str) and payload["reply"]
        assert _shown() == shown_before + 2
    else:
        assert response.status_code in (400, 413)
        assert isinstance(payload["error"], str) and isinstance(payload["detail"], str)
        assert _stored() == before


@EXAMPLES
@given(body=BODIES, content_type=CONTENT_TYPES)
def test_the_page_answers_any_body_with_a_page_or_a_redirect(body, content_type):
    browser = Client()  # the form path; CSRF is the security tests' concern
    before = _stored()
    response = browser.post("/chat/send", body, content_type=content_type)
    assert response.status_code in (302, 400, 413)
    if response.status_code != 302:
        assert response["Content-Type"].startswith("text/html")
        assert _stored() == before


def test_an_oversized_body_is_413_with_the_limit_in_words(customer):
    body = json.dumps({"message": "x" * (settings.DATA_UPLOAD_MAX_MEMORY_SIZE + 1)})
    response = customer.send_raw(body)
    assert response.status_code == 413
    assert response.json()["error"] == "too_large"
    assert "2.5 MB" in response.json()["detail"]


def test_a_method_the_api_does_not_take_is_405_in_json(customer):
    customer.transcript()
    response = customer.http.put(
        "/api/chat", "{}", content_type="application/json", headers={"X-CSRFToken": customer.token}
    )
    assert response.status_code == 405
    assert response["Allow"] == "GET, POST"
    assert response.json()["error"] == "method_not_allowed"


def test_an_oversized_form_gets_the_site_page_with_413(client):
    response = client.post(
        "/chat/send",
        "message=" + "x" * (settings.DATA_UPLOAD_MAX_MEMORY_SIZE + 1),
        content_type="application/x-www-form-urlencoded",
    )
    assert response.status_code == 413
    assert response["Content-Type"].startswith("text/html")
