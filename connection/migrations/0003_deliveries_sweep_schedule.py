"""The task queue's schedule that sweeps webhook deliveries every minute (see connection.tasks)."""

from django.db import migrations

SWEEP = "connection.tasks.deliveries_sweep_task"


def add_schedule(apps, schema_editor):
    Schedule = apps.get_model("django_q", "Schedule")
    Schedule.objects.update_or_create(
        func=SWEEP, defaults={"name": "Webhook deliveries sweep", "schedule_type": "I", "minutes": 1, "repeats": -1}
    )


def remove_schedule(apps, schema_editor):
    apps.get_model("django_q", "Schedule").objects.filter(func=SWEEP).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("connection", "0002_webhooks"),
        ("django_q", "0019_alter_task_options_alter_ormq_key_alter_ormq_lock_and_more"),
    ]

    operations = [migrations.RunPython(add_schedule, remove_schedule)]
