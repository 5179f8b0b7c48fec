from django.apps import AppConfig


class ConnectionConfig(AppConfig):
    """The store connection: the shop's API keys and the store API (orders in), Bookly's events out to
    the store's webhook endpoints, shop platforms' webhooks in and changes written back to them."""

    name = "connection"
    verbose_name = "Store connection"

    def ready(self) -> None:
        from django.db.models.signals import post_save
        from django_q.signals import post_spawn

        from connection.shop_events import shop_saved
        from connection.tasks import (
            event_recorded_queue,
            order_change_requested_queue,
            worker_database_pools_forget,
        )
        from orders.events import event_recorded, order_change_requested
        from orders.models import Shop

        event_recorded.connect(event_recorded_queue, dispatch_uid="connection.event_recorded_queue")
        order_change_requested.connect(
            order_change_requested_queue, dispatch_uid="connection.order_change_requested_queue"
        )
        post_save.connect(shop_saved, sender=Shop, dispatch_uid="connection.shop_saved")
        post_spawn.connect(
            worker_database_pools_forget, dispatch_uid="connection.worker_database_pools_forget"
        )
