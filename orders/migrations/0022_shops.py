"""Shops: every order becomes one shop's, its number unique within that shop only. The orders kept so
far go to a shop of their source: the demo's, imported and test orders to the store's own ("Our
shop"); the store API's, Shopify's and WooCommerce's each to that platform's shop, its address taken
from the settings of the time (SHOPIFY_SHOP_DOMAIN, WOOCOMMERCE_URL) or, when blank, from its next
signed delivery (orders.shops)."""

import django.db.models.deletion
import django.utils.timezone
from django.conf import settings
from django.db import migrations, models

import orders.models
import orders.numbers

_NAMES = {"api": "Store API shop", "shopify": "Shopify shop", "woocommerce": "WooCommerce shop"}


def _address(platform: str) -> str:
    if platform == "shopify":
        return getattr(settings, "SHOPIFY_SHOP_DOMAIN", "").strip().lower()
    if platform == "woocommerce":
        return getattr(settings, "WOOCOMMERCE_URL", "").strip().rstrip("/")
    return ""


def orders_to_shops(apps, schema_editor):
    Shop = apps.get_model("orders", "Shop")
    Order = apps.get_model("orders", "Order")
    own = Shop.objects.create(name=orders.models.OWN_SHOP_NAME, platform="fixture", address="")
    Order.objects.filter(source__in=["fixture", "import"]).update(shop=own)
    for platform, name in _NAMES.items():
        if Order.objects.filter(source=platform).exists():
            shop = Shop.objects.create(name=name, platform=platform, address=_address(platform))
            Order.objects.filter(source=platform).update(shop=shop)


class Migration(migrations.Migration):
    dependencies = [
        ("orders", "0021_lines_that_ship"),
    ]

    operations = [
        migrations.CreateModel(
            name="Shop",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("name", models.CharField(max_length=100, unique=True)),
                (
                    "platform",
                    models.CharField(
                        choices=[
                            ("fixture", "Fixture"),
                            ("api", "Store API"),
                            ("shopify", "Shopify"),
                            ("woocommerce", "WooCommerce"),
                        ],
                        max_length=20,
                    ),
                ),
                ("address", models.CharField(blank=True, max_length=200)),
                ("created_at", models.DateTimeField(default=django.utils.timezone.now)),
            ],
            options={
                "ordering": ["name"],
                "constraints": [
                    models.CheckConstraint(
                        condition=models.Q(("platform__in", ["fixture", "api", "shopify", "woocommerce"])),
                        name="shop_platform_valid",
                    ),
                    models.UniqueConstraint(fields=("platform", "address"), name="shop_address_unique"),
                ],
            },
        ),
        migrations.AddField(
            model_name="order",
            name="shop",
            field=models.ForeignKey(
                null=True, on_delete=django.db.models.deletion.PROTECT, related_name="orders", to="orders.shop"
            ),
        ),
        migrations.RunPython(orders_to_shops, migrations.RunPython.noop),
        migrations.AlterField(
            model_name="order",
            name="shop",
            field=models.ForeignKey(
                default=orders.models.own_shop,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="orders",
                to="orders.shop",
            ),
        ),
        migrations.AlterField(
            model_name="order",
            name="number",
            field=models.CharField(max_length=32, validators=[orders.numbers.OrderNumberValidator()]),
        ),
        migrations.AddIndex(
            model_name="order",
            index=models.Index(fields=["number"], name="orders_orde_number_539d36_idx"),
        ),
        migrations.AddConstraint(
            model_name="order",
            constraint=models.UniqueConstraint(fields=("shop", "number"), name="order_number_unique_in_shop"),
        ),
    ]
