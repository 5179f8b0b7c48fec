"""The "Support staff" group also reads and answers conversations, and moves returns along."""

from django.contrib.auth.management import create_permissions
from django.db import migrations

GROUP_NAME = "Support staff"
PERMISSIONS = [
    ("support", "view_conversation"),
    ("support", "change_conversation"),
    ("orders", "change_returnrecord"),
]


def _permissions(apps):
    # Permissions are normally created after all migrations have run.
    for app_config in apps.get_app_configs():
        app_config.models_module = True
        create_permissions(app_config, apps=apps, verbosity=0)
        app_config.models_module = None
    Permission = apps.get_model("auth", "Permission")
    return [
        Permission.objects.get(content_type__app_label=app_label, codename=codename)
        for app_label, codename in PERMISSIONS
    ]


def grant(apps, schema_editor):
    group, _ = apps.get_model("auth", "Group").objects.get_or_create(name=GROUP_NAME)
    group.permissions.add(*_permissions(apps))


def revoke(apps, schema_editor):
    group = apps.get_model("auth", "Group").objects.filter(name=GROUP_NAME).first()
    if group is not None:
        group.permissions.remove(*_permissions(apps))


class Migration(migrations.Migration):
    dependencies = [
        ("support", "0005_people_in_the_loop"),
        ("orders", "0003_remove_returnrecord_conversation"),
    ]

    operations = [migrations.RunPython(grant, revoke)]
