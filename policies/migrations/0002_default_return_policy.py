"""Create the single return-policy row, so the store always has a policy to read."""

from django.db import migrations


def create_return_policy(apps, schema_editor):
    ReturnPolicy = apps.get_model("policies", "ReturnPolicy")
    ReturnPolicy.objects.get_or_create(
        id=1,
        defaults={
            "window_days": 30,
            "condition_requirements": "Items must be unread, undamaged and in their original packaging.",
            "refund_method": "the original payment method",
            "refund_timeline_business_days": 7,
            "non_returnable_categories": ["ebook", "audiobook", "gift_card", "personalized_item"],
        },
    )


class Migration(migrations.Migration):
    dependencies = [("policies", "0001_initial")]

    operations = [migrations.RunPython(create_return_policy, migrations.RunPython.noop)]
