"""The "Support staff" group also starts returns from an order's page (within the return policy; a
return beyond it needs orders.grant_return_exception, given to whoever may grant exceptions)."""

from django.db import migrations

from support.migrations._support_staff import support_staff_grant


class Migration(migrations.Migration):
    dependencies = [("support", "0011_turn_dead_ends"), ("orders", "0006_staff_returns")]

    operations = [support_staff_grant(("orders", "add_returnrecord"))]
