"""When the chat told the customer that the store did not make a change it was asked to make."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("support", "0019_support_staff_view_shipments_refunds"),
    ]

    operations = [
        migrations.AddField(
            model_name="conversationorderchange",
            name="customer_told_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
    ]
