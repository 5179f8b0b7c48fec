"""The task queue's schedule that sends, every five minutes, the customer emails a mail server refused."""

from django.db import migrations

SWEEP = "orders.tasks.customer_emails_sweep_task"


def add_schedule(apps, schema_editor):
    Schedule = apps.get_model("django_q", "Schedule")
    Schedule.objects.update_or_create(
        func=SWEEP, defaults={"name": "Customer emails sweep", "schedule_type": "I", "minutes": 5, "repeats": -1}
    )


def remove_schedule(apps, schema_editor):
    apps.get_model("django_q", "Schedule").objects.filter(func=SWEEP).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("orders", "0011_events"),
        ("django_q", "0019_alter_task_options_alter_ormq_key_alter_ormq_lock_and_more"),
    ]

    operations = [migrations.RunPython(add_schedule, remove_schedule)]
