"""Shops: every order becomes one shop's, its number unique within that shop only. Before shops a
Bookly served one store, so the orders kept so far stay together: the demo's (fixture) in our own shop;
the store's orders (from its platform, the store API or a file import) in the store's shop, made for
its platform (Shopify before WooCommerce before the store API), the address from the settings of the
time (SHOPIFY_SHOP_DOMAIN's first, WOOCOMMERCE_WEBHOOK_SOURCES's first; when blank, its first signed
delivery's: orders.shops). Orders of a second platform, if a store had two, go to that platform's shop.
A store of imports alone keeps them in our own shop. connection 0006 gives the store's shop the keys."""

import django.db.models.deletion
import django.utils.timezone
from django.conf import settings
from django.db import migrations, models

import orders.models
import orders.numbers
from orders.shops import shop_address

_NAMES = {"shopify": "Shopify shop", "woocommerce": "WooCommerce shop", "api": "Store API shop"}
_SETTINGS = {"shopify": "SHOPIFY_SHOP_DOMAIN", "woocommerce": "WOOCOMMERCE_WEBHOOK_SOURCES"}


def _address(platform: str) -> str:
    listed = getattr(settings, _SETTINGS.get(platform, ""), "") or ""
    return shop_address(platform=platform, named=next(iter(listed.split()), ""))


def orders_to_shops(apps, schema_editor):
    Shop = apps.get_model("orders", "Shop")
    Order = apps.get_model("orders", "Order")
    own = Shop.objects.create(name=orders.models.OWN_SHOP_NAME, platform="fixture", address="")
    Order.objects.filter(source="fixture").update(shop=own)
    platforms = [platform for platform in ("shopify", "woocommerce") if Order.objects.filter(source=platform).exists()]
    api = Order.objects.filter(source="api").exists()
    shops = {
        platform: Shop.objects.create(name=_NAMES[platform], platform=platform, address=_address(platform))
        for platform in platforms or (["api"] if api else [])
    }
    store = next(iter(shops.values()), own)
    for platform, shop in shops.items():
        Order.objects.filter(source=platform).update(shop=shop)
    Order.objects.filter(source__in=["api", "import"]).update(shop=store)


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
