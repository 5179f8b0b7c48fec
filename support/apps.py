from django.apps import AppConfig


class SupportConfig(AppConfig):
    name = "support"
    verbose_name = "Customer support assistant"

    def ready(self):
        from support.assistant import prompts  # noqa: F401 - connects its signal receiver
        from support.conversations import handoff  # noqa: F401 - connects its signal receiver
        from support.web import checks  # noqa: F401 - registers the system checks
