from django.apps import AppConfig


class SupportConfig(AppConfig):
    name = "support"
    verbose_name = "Customer support assistant"

    def ready(self):
        from support.web import checks  # noqa: F401 - registers the system checks
