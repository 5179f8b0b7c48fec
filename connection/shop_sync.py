"""Backfill: a shop's orders read from its platform's order list and applied as its webhooks' are (each
kept as a shop event, through the order intake, so its rules hold and staff see each outcome). Run
again, it reads the list again and skips every order already received as it is now (same id, same
last change): an interrupted run is resumed by running it again."""

import logging
import time
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime

from connection.models import ShopEventOutcome, ShopPlatform
from connection.shop_events import shop_event_apply, shop_event_receive
from connection.shopify.listing import shopify_client, shopify_order_pages
from connection.shops import shop_key
from connection.woocommerce.listing import woocommerce_client, woocommerce_order_pages
from orders.models import Shop

logger = logging.getLogger(__name__)

# Per platform: its client, its order list, the webhook topic a listed order is applied as, and the
# field of its last change.
_PLATFORMS = {
    ShopPlatform.SHOPIFY: (shopify_client, shopify_order_pages, "orders/updated", "updated_at"),
    ShopPlatform.WOOCOMMERCE: (
        woocommerce_client,
        woocommerce_order_pages,
        "order.updated",
        "date_modified_gmt",
    ),
}


@dataclass
class SyncReport:
    outcomes: Counter = field(default_factory=Counter)  # per ShopEventOutcome, of the orders applied
    already: int = 0  # received before as they are now: skipped
    failed: int = 0  # could not be applied now (kept: the sweep applies them, or the next run)
    total: int | None = None  # what the platform said its list holds

    @property
    def read(self) -> int:
        return sum(self.outcomes.values()) + self.already + self.failed


def shop_sync(
    *,
    shop: Shop,
    since: datetime,
    sleep: Callable[[float], None] = time.sleep,
    progress: Callable[[SyncReport], None] = lambda report: None,
) -> SyncReport:
    """Every order of the shop's list changed since `since`, read with its own key (connection.shops.
    shop_key) and applied to it; `progress` after each."""
    key = shop_key(shop=shop)  # refused for a shop no key here reaches (or of no platform)
    platform = ShopPlatform(shop.platform)
    make_client, pages, topic, changed = _PLATFORMS[platform]
    report = SyncReport()
    client, base = make_client(key=key)
    with client:
        for page in pages(client=client, base=base, since=since, sleep=sleep):
            report.total = page.total if page.total is not None else report.total
            for order in page.orders:
                _apply(
                    platform=platform,
                    shop=shop,
                    topic=topic,
                    order=order,
                    changed=order.get(changed),
                    report=report,
                )
                progress(report)
    return report


def _apply(
    *, platform: str, shop: Shop, topic: str, order: Mapping, changed: object, report: SyncReport
) -> None:
    delivery_id = f"sync:{shop.pk}:{order.get('id')}:{changed}"[:100]
    event, new = shop_event_receive(
        platform=platform, shop=shop, delivery_id=delivery_id, topic=topic, body=order, queue=False
    )
    if not new and event.applied_at is not None:
        report.already += 1
        return
    try:
        report.outcomes[ShopEventOutcome(shop_event_apply(event_id=event.pk).outcome)] += 1
    except Exception:
        # One order's error stops no other: the event stays pending for the sweep and the next run.
        logger.exception("shop sync: %s event %s could not be applied", platform, event.pk)
        report.failed += 1
