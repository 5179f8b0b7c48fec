# The link from a return to the conversation that started it now belongs to the
# chat (support.ConversationReturn); support's migration 0003 copies it there
# first (it runs before this one).

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('orders', '0002_returnrecord_conversation'),
    ]

    operations = [
        migrations.RemoveField(
            model_name='returnrecord',
            name='conversation',
        ),
    ]
