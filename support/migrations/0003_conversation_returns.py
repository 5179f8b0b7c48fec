# The chat owns its link to the returns it started (it was orders.ReturnRecord.conversation).
# Reversing it copies the links back; reverse support and orders together (orders 0003 first).

import django.db.models.deletion
import django.utils.timezone
from django.db import migrations, models


def copy_links(apps, schema_editor):
    ReturnRecord = apps.get_model('orders', 'ReturnRecord')
    ConversationReturn = apps.get_model('support', 'ConversationReturn')
    ConversationReturn.objects.bulk_create(
        ConversationReturn(conversation_id=conversation_id, return_record_id=record_id, created_at=created_at)
        for record_id, conversation_id, created_at in ReturnRecord.objects.filter(
            conversation__isnull=False
        ).values_list('id', 'conversation_id', 'created_at')
    )


def copy_links_back(apps, schema_editor):
    ReturnRecord = apps.get_model('orders', 'ReturnRecord')
    ConversationReturn = apps.get_model('support', 'ConversationReturn')
    for link in ConversationReturn.objects.all():
        ReturnRecord.objects.filter(pk=link.return_record_id).update(conversation_id=link.conversation_id)


class Migration(migrations.Migration):

    dependencies = [
        ('orders', '0002_returnrecord_conversation'),
        ('support', '0002_conversations'),
    ]
    # Copy the links before orders drops its column; declared here, so that the
    # store's migrations never name the chat again.
    run_before = [
        ('orders', '0003_remove_returnrecord_conversation'),
    ]

    operations = [
        migrations.CreateModel(
            name='ConversationReturn',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('created_at', models.DateTimeField(default=django.utils.timezone.now, editable=False)),
                ('conversation', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='return_links', to='support.conversation')),
                ('return_record', models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, related_name='conversation_link', to='orders.returnrecord')),
            ],
            options={
                'ordering': ['conversation', 'created_at'],
            },
        ),
        migrations.AddField(
            model_name='conversation',
            name='returns',
            field=models.ManyToManyField(blank=True, related_name='conversations', through='support.ConversationReturn', to='orders.returnrecord'),
        ),
        migrations.RunPython(copy_links, copy_links_back),
    ]
