"""The "Support staff" group also reads the turn traces (the review of replies customers voted on)."""

from django.db import migrations

from support.migrations._support_staff import support_staff_grant


class Migration(migrations.Migration):
    dependencies = [("support", "0007_turn_traces_and_ratings")]

    operations = [support_staff_grant(("support", "view_turntrace"))]
