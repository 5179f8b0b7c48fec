"""FAQ entries gain the questions customers ask about them; the demo's three topics get theirs."""

from django.db import migrations, models

import policies.models

# The demo topics' first questions, for a database made before this field (loaddata brings these and more).
EXAMPLES = {
    "returns_overview": "How do returns work?\nWhat is your return policy?\nCan I return a book?",
    "shipping": "How long does shipping take?\nHow much does shipping cost?\nDo you ship internationally?",
    "password_reset": "How do I reset my password?\nI forgot my password\nI can't log in to my account",
}


def fill(apps, schema_editor):
    PolicyEntry = apps.get_model("policies", "PolicyEntry")
    for entry in PolicyEntry.objects.filter(example_questions=""):
        # Any other topic gets its own title as its first question, for staff to improve.
        entry.example_questions = EXAMPLES.get(entry.topic, entry.title)
        entry.save(update_fields=["example_questions"])


class Migration(migrations.Migration):
    dependencies = [("policies", "0002_default_return_policy")]

    operations = [
        migrations.AddField(
            model_name="policyentry",
            name="example_questions",
            field=models.TextField(
                default="",
                help_text=(
                    "How customers ask about this topic, one question a line (1 to 20), in their words, e.g. "
                    "“Do you offer gift wrapping?”. The first three, the most typical, are given to the "
                    "assistant to match questions to topics."
                ),
                validators=[policies.models.example_questions_validate],
            ),
            preserve_default=False,
        ),
        migrations.RunPython(fill, migrations.RunPython.noop),
    ]
