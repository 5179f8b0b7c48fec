"""Support staff see the shops orders belong to (orders.Shop); superusers name them."""

from django.db import migrations

from support.migrations._support_staff import support_staff_grant


class Migration(migrations.Migration):
    dependencies = [
        ("support", "0020_order_change_customer_told"),
        ("orders", "0022_shops"),
    ]

    operations = [support_staff_grant(("orders", "view_shop"))]
