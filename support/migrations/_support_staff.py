"""Giving the "Support staff" group more permissions in a migration (the loader skips this module: its
name starts with an underscore)."""

from django.contrib.auth.management import create_permissions
from django.db import migrations

GROUP_NAME = "Support staff"


def support_staff_grant(*permissions: tuple[str, str]) -> migrations.RunPython:
    """A reversible operation adding (app_label, codename) permissions to the group."""

    def found(apps):
        # Permissions are normally created after all migrations have run.
        for app_config in apps.get_app_configs():
            app_config.models_module = True
            create_permissions(app_config, apps=apps, verbosity=0)
            app_config.models_module = None
        Permission = apps.get_model("auth", "Permission")
        return [
            Permission.objects.get(content_type__app_label=app_label, codename=codename)
            for app_label, codename in permissions
        ]

    def grant(apps, schema_editor):
        group, _ = apps.get_model("auth", "Group").objects.get_or_create(name=GROUP_NAME)
        group.permissions.add(*found(apps))

    def revoke(apps, schema_editor):
        group = apps.get_model("auth", "Group").objects.filter(name=GROUP_NAME).first()
        if group is not None:
            group.permissions.remove(*found(apps))

    return migrations.RunPython(grant, revoke)
