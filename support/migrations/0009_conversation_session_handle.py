"""Conversations keep a keyed hash of their session's key, never the key (support staff could recover a
stored key through admin URL lookups and open that session), and when the customer was last seen."""

import django.utils.timezone
from django.db import migrations, models
from django.db.models import F, Q
from django.utils.crypto import salted_hmac

ONE_OPEN_PER_SESSION = models.UniqueConstraint(
    condition=Q(ended_at__isnull=True), fields=("session_handle",), name="conversation_one_open_per_session"
)


def hash_session_keys(apps, schema_editor):
    """Each stored key becomes its handle (as support.conversations.services.session_handle computes
    it), so open conversations stay their sessions'. Customers were last seen at their last message."""
    conversations = apps.get_model("support", "Conversation").objects
    for pk, key in conversations.values_list("pk", "session_handle").iterator():
        handle = salted_hmac("bookly.conversation-session", key, algorithm="sha256").hexdigest()
        conversations.filter(pk=pk).update(session_handle=handle)
    conversations.update(customer_seen_at=F("last_activity_at"))


def forget_handles(apps, schema_editor):
    """Going back: a hash gives no key back, so open conversations end (their customers start afresh)."""
    conversations = apps.get_model("support", "Conversation").objects
    conversations.filter(ended_at__isnull=True).update(ended_at=django.utils.timezone.now())
    conversations.update(session_handle="")


class Migration(migrations.Migration):
    dependencies = [("support", "0008_support_staff_traces")]

    operations = [
        migrations.RemoveConstraint(model_name="conversation", name="conversation_one_open_per_session"),
        migrations.RenameField(model_name="conversation", old_name="session_key", new_name="session_handle"),
        migrations.AlterField(
            model_name="conversation", name="session_handle", field=models.CharField(max_length=64)
        ),
        migrations.AddField(
            model_name="conversation",
            name="customer_seen_at",
            field=models.DateTimeField(default=django.utils.timezone.now),
        ),
        migrations.RunPython(hash_session_keys, forget_handles),
        migrations.AddConstraint(model_name="conversation", constraint=ONE_OPEN_PER_SESSION),
    ]
