"""The "Support staff" group: view orders and returns, edit the FAQ, delete nothing."""

from django.contrib.auth.management import create_permissions
from django.db import migrations

GROUP_NAME = "Support staff"
PERMISSIONS = [
    ("orders", "view_order"),
    ("orders", "view_orderitem"),
    ("orders", "view_returnrecord"),
    ("orders", "view_returnline"),
    ("policies", "view_returnpolicy"),
    ("policies", "view_policyentry"),
    ("policies", "add_policyentry"),
    ("policies", "change_policyentry"),
]


def create_group(apps, schema_editor):
    # Permissions are normally created after all migrations have run; make
    # sure they exist now, on a fresh database too.
    for app_config in apps.get_app_configs():
        app_config.models_module = True
        create_permissions(app_config, apps=apps, verbosity=0)
        app_config.models_module = None

    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    group, _ = Group.objects.get_or_create(name=GROUP_NAME)
    for app_label, codename in PERMISSIONS:
        group.permissions.add(Permission.objects.get(content_type__app_label=app_label, codename=codename))


def delete_group(apps, schema_editor):
    apps.get_model("auth", "Group").objects.filter(name=GROUP_NAME).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
        ("orders", "0001_initial"),
        ("policies", "0001_initial"),
    ]

    operations = [migrations.RunPython(create_group, delete_group)]
