from django.apps import AppConfig


class OrdersConfig(AppConfig):
    name = "orders"
    verbose_name = "Orders and returns"

    def ready(self) -> None:
        from orders import checks  # noqa: F401 (registers the stored orders' checks)
