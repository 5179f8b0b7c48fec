from django.apps import AppConfig


class ConnectionConfig(AppConfig):
    """The store connection: the shop's API keys and the store API (orders in, returns out)."""

    name = "connection"
    verbose_name = "Store connection"
