"""Shops: every order is one shop's, its number unique within the shop; a platform's shop is made by its
first delivery, and the one kept before shops were takes the first address named."""

from datetime import date
from io import StringIO
from pathlib import Path

import pytest
from django.core.exceptions import ValidationError
from django.core.management import call_command
from django.db import IntegrityError

from orders.intake import OrderRefused, incoming_order_clean, order_upsert
from orders.models import OWN_SHOP_NAME, Order, OrderSource, Shop
from orders.numbers import ORDER_NUMBERS
from orders.shops import shop_address, shop_named_in, shop_of_platform
from orders.tests.factories import OrderFactory

pytestmark = pytest.mark.django_db


def test_an_order_that_says_no_shop_is_our_own_shops_and_a_number_is_unique_within_a_shop_only():
    order = OrderFactory.create(number="BK-30001")
    assert (order.shop.name, order.shop.platform) == (OWN_SHOP_NAME, OrderSource.FIXTURE)
    other = shop_of_platform(platform=OrderSource.SHOPIFY, address="books.myshopify.com")
    assert OrderFactory.create(number="BK-30001", shop=other).shop == other
    with pytest.raises(IntegrityError):
        OrderFactory.create(number="BK-30001", shop=other)


def test_a_platforms_shop_kept_without_an_address_takes_the_first_one_named_and_the_next_is_a_new_shop():
    unnamed = shop_of_platform(platform=OrderSource.SHOPIFY)
    assert (unnamed.name, unnamed.address) == ("Shopify shop", "")

    first = shop_of_platform(platform=OrderSource.SHOPIFY, address="books-au.myshopify.com")
    second = shop_of_platform(platform=OrderSource.SHOPIFY, address="books-us.myshopify.com")

    assert first.pk == unnamed.pk and first.address == "books-au.myshopify.com"
    assert second.pk != first.pk and second.name == "books-us.myshopify.com"
    assert shop_of_platform(platform=OrderSource.SHOPIFY, address="books-us.myshopify.com") == second
    # A shop without an address made again (a delivery that named none) is the platform's only while no
    # named shop is: the next new address is a shop of its own, never that one's.
    blank = shop_of_platform(platform=OrderSource.SHOPIFY)
    assert shop_of_platform(platform=OrderSource.SHOPIFY, address="books-nz.myshopify.com") != blank
    # A name staff gave a shop is never taken by a new one.
    Shop.objects.filter(pk=second.pk).update(name="books-uk.myshopify.com")
    assert shop_of_platform(platform=OrderSource.SHOPIFY, address="books-uk.myshopify.com").name == (
        "books-uk.myshopify.com 2"
    )


def test_a_file_is_imported_into_the_shop_named_and_an_unknown_shop_is_refused_with_the_shops_named(
    tmp_path: Path,
):
    woo = shop_of_platform(platform=OrderSource.WOOCOMMERCE, address="https://books.example")
    file = tmp_path / "orders.csv"
    file.write_text(
        "number,customer_name,customer_email,status,ordered_on,total,line_number,title,author,unit_price,"
        "quantity\nBK-30002,Ana,ana@example.com,processing,2026-04-01,12.00,1,Dune,Frank Herbert,12.00,1\n"
    )
    with pytest.raises(Exception, match=r"several shops: say which with --shop \(.*books\.example"):
        call_command("import_orders", str(file), stdout=StringIO())
    call_command("import_orders", str(file), "--shop", woo.name, stdout=StringIO())
    assert Order.objects.get(number="BK-30002").shop == woo
    with pytest.raises(Exception, match=r"No shop is named 'Nowhere'\. The shops: .*books\.example\."):
        call_command("import_orders", str(file), "--shop", "Nowhere", stdout=StringIO())


def test_support_staff_see_the_shops_and_an_orders_shop_and_change_none(staff_client):
    shop = shop_of_platform(platform=OrderSource.SHOPIFY, address="books.myshopify.com")
    order = OrderFactory.create(shop=shop, source=OrderSource.SHOPIFY)
    listed = staff_client.get("/admin/orders/shop/").content.decode()
    assert "books.myshopify.com" in listed and OWN_SHOP_NAME in listed
    assert (
        "books.myshopify.com" in staff_client.get(f"/admin/orders/order/{order.pk}/change/").content.decode()
    )
    assert staff_client.post(f"/admin/orders/shop/{shop.pk}/change/", {"name": "AU"}).status_code == 403


def test_a_superuser_names_a_shop_but_never_moves_it_to_another_address(superuser_client):
    shop = shop_of_platform(platform=OrderSource.SHOPIFY, address="books.myshopify.com")
    # The page's connection (connection.admin) is posted empty.
    form = {"name": "Books Australia", "address": "evil.myshopify.com", "number_pattern": "BK-[0-9]{4,6}",
            "number_example": "BK-10042", "currency": "aud", "connection-TOTAL_FORMS": "0",
            "connection-INITIAL_FORMS": "0"}  # fmt: skip
    answer = superuser_client.post(f"/admin/orders/shop/{shop.pk}/change/", form)
    shop.refresh_from_db()
    assert answer.status_code == 302 and (shop.name, shop.address, shop.currency) == (
        "Books Australia",
        "books.myshopify.com",
        "AUD",
    )


# Serialized rollback, like the suite's other transactional tests: the content types survive the flush.
@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_a_stores_orders_kept_before_shops_stay_together_in_its_shop_and_its_keys_with_them(
    migrate, settings
):
    """Before shops a Bookly served one store: its orders, whichever way they last came (its platform,
    the store API, an import), and its keys go to one shop, the demo's to our own."""
    settings.SHOPIFY_SHOP_DOMAIN = "Books.myshopify.com other.myshopify.com"
    old = migrate([("orders", "0021_lines_that_ship"), ("connection", "0005_shop_writes")])
    orders = old.get_model("orders", "Order").objects
    fields = {"customer_name": "Ann", "customer_email": "ann@example.com", "status": "processing",
              "ordered_on": date(2026, 4, 1), "total": "10.00"}  # fmt: skip
    for number, source in [("BK-1", "fixture"), ("BK-2", "import"), ("BK-3", "api"), ("BK-4", "shopify")]:
        orders.create(number=number, source=source, **fields)
    old.get_model("connection", "StoreApiKey").objects.create(
        id="k.1", prefix="k", hashed_key="x", name="Shop"
    )

    new = migrate([("orders", "0022_shops"), ("connection", "0006_store_api_key_shop")])

    kept = new.get_model("orders", "Order").objects.order_by("number")
    assert [(order.number, order.shop.name, order.shop.platform, order.shop.address) for order in kept] == [
        ("BK-1", OWN_SHOP_NAME, "fixture", ""),
        ("BK-2", "Shopify shop", "shopify", "books.myshopify.com"),
        ("BK-3", "Shopify shop", "shopify", "books.myshopify.com"),
        ("BK-4", "Shopify shop", "shopify", "books.myshopify.com"),
    ]
    assert new.get_model("connection", "StoreApiKey").objects.get().shop.name == "Shopify shop"


def test_a_shops_number_shape_is_its_own_and_staff_cannot_give_it_one_its_orders_lack():
    shopify = shop_of_platform(platform=OrderSource.SHOPIFY, address="books.myshopify.com")
    shopify.number_pattern, shopify.number_example = "#[0-9]{4,}", "#1001"
    shopify.full_clean()
    shopify.save()
    woo = shop_of_platform(platform=OrderSource.WOOCOMMERCE, address="https://books.example")
    woo.number_pattern, woo.number_example = "[0-9]{3,}", "727"
    woo.save()
    data = {"customer_name": "Ana", "customer_email": "ana@example.com", "status": "processing",
            "ordered_on": "2026-04-01", "total": "12.00",
            "items": [{"line_number": 1, "title": "Dune", "unit_price": "12.00", "quantity": 1}]}  # fmt: skip

    order, _ = order_upsert(
        incoming=incoming_order_clean(number="#1104", data=data), source=OrderSource.SHOPIFY, shop=shopify
    )
    with pytest.raises(OrderRefused) as refused:  # WooCommerce's shape, sent for the Shopify shop
        order_upsert(
            incoming=incoming_order_clean(number="1104", data=data), source=OrderSource.SHOPIFY, shop=shopify
        )

    assert order.number == "#1104"
    assert refused.value.problems == [
        {"field": "number", "problem": "must look like #1001, the shape of books.myshopify.com's numbers"}
    ]
    # Every shop's shape is read in a customer's words; the prefix of none is said when they differ.
    assert set(ORDER_NUMBERS.forms("1104")) >= {"1104", "#1104"}
    assert ORDER_NUMBERS.prefix == ""
    shopify.number_pattern, shopify.number_example = "SO-[0-9]{4}", "SO-1001"
    with pytest.raises(ValidationError, match="order #1104 does not have this shape"):
        shopify.full_clean()
    shopify.number_pattern = "^#[0-9]+"
    with pytest.raises(ValidationError, match="leave out"):
        shopify.full_clean()


@pytest.mark.parametrize(
    ("said", "named"),
    [
        ("the one from Books Outlet please", "Books Outlet"),
        ("Books", "Books"),
        ("I mean Books, not Books Outlet", None),
        ("where is it? books.fan@example.com", None),
        ("see https://books.example/orders", None),
        ("books-us.myshopify.com", "books-us.myshopify.com"),
        ("neither", None),
    ],
)
def test_a_shop_is_named_by_the_customers_words_alone(said, named):
    shops = [
        Shop(pk=1, name="Books", platform=OrderSource.API),
        Shop(pk=2, name="Books Outlet", platform=OrderSource.API),
        Shop(pk=3, name="books-us.myshopify.com", platform="shopify", address="books-us.myshopify.com"),
    ]
    found = shop_named_in(text=said, shops=shops)
    assert (found.name if found else None) == named


@pytest.mark.parametrize(
    ("named", "kept"),
    [
        ("Books-US.myshopify.com", "books-us.myshopify.com"),
        ("https://Books-US.myshopify.com/admin", "books-us.myshopify.com"),  # typed in admin as a link
        ("not a domain", ""),
        ("books", ""),
    ],
)
def test_a_shopify_shop_is_kept_by_its_domain_as_its_deliveries_name_it(named, kept):
    assert shop_address(platform=OrderSource.SHOPIFY, named=named) == kept
