import re

import pytest

from connection.models import StoreApiKey

pytestmark = pytest.mark.django_db


def test_a_superuser_makes_a_key_shown_once_and_it_opens_the_store_api(superuser_client, client):
    response = superuser_client.post("/admin/connection/storeapikey/add/", {"name": "Our shop"}, follow=True)
    shown = re.search(r"The API key for Our shop is: (\S+)\. ", response.content.decode())
    assert shown, "the key is shown in the message after saving"
    key = shown.group(1)
    listed = superuser_client.get("/admin/connection/storeapikey/").content.decode()
    assert key not in listed and StoreApiKey.objects.get().prefix in listed
    assert client.get("/api/store/v1/orders", headers={"authorization": f"Bearer {key}"}).status_code == 200


def test_support_staff_never_see_store_api_keys(staff_client):
    StoreApiKey.objects.create_key(name="Our shop")
    assert staff_client.get("/admin/connection/storeapikey/").status_code == 403
    assert "Store API keys" not in staff_client.get("/admin/").content.decode()
