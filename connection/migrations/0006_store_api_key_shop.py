"""Each store API key reaches one shop's orders: the keys made so far, the store's shop (orders 0022:
the one holding the store's orders other than the demo's), else our own."""

import django.db.models.deletion
from django.db import migrations, models


def keys_to_the_stores_shop(apps, schema_editor):
    StoreApiKey = apps.get_model("connection", "StoreApiKey")
    Shop = apps.get_model("orders", "Shop")
    if not StoreApiKey.objects.exists():
        return
    shop = Shop.objects.exclude(platform="fixture").order_by("pk").first() or Shop.objects.get(
        platform="fixture", address=""
    )
    StoreApiKey.objects.update(shop=shop)


class Migration(migrations.Migration):
    dependencies = [
        ("connection", "0005_shop_writes"),
        ("orders", "0022_shops"),
    ]

    operations = [
        migrations.AddField(
            model_name="storeapikey",
            name="shop",
            field=models.ForeignKey(
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="store_api_keys",
                to="orders.shop",
            ),
        ),
        migrations.RunPython(keys_to_the_stores_shop, migrations.RunPython.noop),
        migrations.AlterField(
            model_name="storeapikey",
            name="shop",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.PROTECT, related_name="store_api_keys", to="orders.shop"
            ),
        ),
    ]
