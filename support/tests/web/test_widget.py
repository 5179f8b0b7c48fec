"""The widget's server side: which pages a store may frame, the script's address, cookies that work in
a store's frame, and the admin page that gives superusers the tag. The widget itself runs in a real
browser in test_browser.py."""

import pytest
from django.test import Client

STORE = "https://shop.example.com"


@pytest.fixture
def widget_on(settings):
    settings.BOOKLY_WIDGET_ORIGINS = [STORE]


@pytest.mark.django_db
def test_only_the_widget_s_page_may_be_framed_and_only_by_the_listed_origins(widget_on):
    client = Client()
    embedded = client.get("/?embed=1")
    assert f"frame-ancestors {STORE}" in embedded["Content-Security-Policy"]
    assert "X-Frame-Options" not in embedded
    assert "page-chat--embed" in embedded.content.decode()

    page = client.get("/")
    assert "frame-ancestors 'none'" in page["Content-Security-Policy"] and page["X-Frame-Options"] == "DENY"
    admin = client.get("/admin/login/")
    assert "frame-ancestors 'none'" in admin["Content-Security-Policy"] and admin["X-Frame-Options"] == "DENY"


@pytest.mark.django_db
def test_without_listed_origins_nothing_may_frame_the_chat():
    embedded = Client().get("/?embed=1")
    assert "frame-ancestors 'none'" in embedded["Content-Security-Policy"]
    assert embedded["X-Frame-Options"] == "DENY"


@pytest.mark.django_db
def test_the_chat_s_cookies_work_in_a_store_s_frame_only_when_the_widget_is_on(settings, offline):
    lax = Client().get("/").cookies["csrftoken"].output()
    assert "SameSite=Lax" in lax and "Partitioned" not in lax

    settings.BOOKLY_WIDGET_ORIGINS = [STORE]
    client = Client(enforce_csrf_checks=True)
    csrf = client.get("/?embed=1").cookies["csrftoken"]
    reply = client.post(
        "/api/chat", {"message": "Hi"}, content_type="application/json", headers={"X-CSRFToken": csrf.value}
    )
    assert reply.status_code == 200  # the CSRF check holds with these cookies
    for cookie in (csrf, reply.cookies["sessionid"]):
        written = cookie.output()
        assert "SameSite=None" in written and "Secure" in written and written.endswith("; Partitioned")


def test_the_script_has_one_address_and_may_be_loaded_by_any_page(client):
    response = client.get("/widget.js")
    assert response.status_code == 200
    assert response["Content-Type"] == "text/javascript; charset=utf-8"
    assert response["Cross-Origin-Resource-Policy"] == "cross-origin"
    assert b"window.BooklyWidget" in response.content


WEBSITE = "/admin/support/conversation/website/"


def test_a_superuser_finds_the_tag_the_origins_and_the_secret(superuser_client, settings):
    settings.BOOKLY_WIDGET_ORIGINS = ["https://shop.example.com"]
    settings.BOOKLY_CUSTOMER_SIGNING_SECRET = "a-store-secret-of-thirty-two-characters-or-more"
    assert WEBSITE in superuser_client.get("/admin/").content.decode()
    page = superuser_client.get(WEBSITE).content.decode()
    assert '&lt;script src="http://testserver/widget.js" async&gt;&lt;/script&gt;' in page
    assert "<code>https://shop.example.com</code>" in page
    assert settings.BOOKLY_CUSTOMER_SIGNING_SECRET in page


def test_without_origins_or_a_secret_the_page_says_what_to_set(superuser_client):
    page = superuser_client.get(WEBSITE).content.decode()
    assert "Nowhere yet" in page
    assert "set <code>BOOKLY_CUSTOMER_SIGNING_SECRET</code>" in page


def test_support_staff_never_see_the_signing_secret(staff_client, settings):
    settings.BOOKLY_CUSTOMER_SIGNING_SECRET = "a-store-secret-of-thirty-two-characters-or-more"
    assert staff_client.get(WEBSITE).status_code == 403
    assert WEBSITE not in staff_client.get("/admin/").content.decode()
