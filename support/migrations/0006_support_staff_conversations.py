"""The "Support staff" group also reads and answers conversations, and moves returns along."""

from django.db import migrations

from support.migrations._support_staff import support_staff_grant


class Migration(migrations.Migration):
    dependencies = [
        ("support", "0005_people_in_the_loop"),
        ("orders", "0003_remove_returnrecord_conversation"),
    ]

    operations = [
        support_staff_grant(
            ("support", "view_conversation"),
            ("support", "change_conversation"),
            ("orders", "change_returnrecord"),
        )
    ]
