"""Support staff see the parcels an order was sent in and the refunds the shop made (orders.Shipment and
orders.Refund, on the order's page)."""

from django.db import migrations

from support.migrations._support_staff import support_staff_grant


class Migration(migrations.Migration):
    dependencies = [
        ("support", "0018_conversation_message_model_state"),
        ("orders", "0017_shipments_refunds"),
    ]

    operations = [support_staff_grant(("orders", "view_shipment"), ("orders", "view_refund"))]
