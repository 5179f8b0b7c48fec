"""`manage.py shop_sync --since 2026-01-01 [--shop NAME]`: a shop's orders changed since a date, read
from its platform (Shopify or WooCommerce) with its key and applied as its webhooks' are. Resumable: run
it again and what was already received is skipped."""

import sys
from datetime import datetime
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone
from tqdm import tqdm

from connection.models import ShopEventOutcome, ShopPlatform
from connection.platform_http import PlatformError
from connection.shop_sync import SyncReport, shop_sync
from connection.shops import shops_with_key
from orders.shops import ShopNotSaid, shop_named


class Command(BaseCommand):
    help = "Read the shop's orders changed since a date from Shopify or WooCommerce and apply them."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--since", required=True, help="a date (2026-01-01) or a time with its offset")
        parser.add_argument("--shop", dest="shop_name", help="the shop's name, when several have a key")
        parser.add_argument("--platform", choices=ShopPlatform.values, help="its platform's shop, when one")
        parser.add_argument("--no-progress", action="store_true", help="no progress bar (in logs, cron)")

    def handle(
        self,
        *args: Any,
        since: str,
        shop_name: str | None,
        platform: str | None,
        no_progress: bool,
        **options: Any,
    ) -> None:
        try:
            moment = datetime.fromisoformat(since)
        except ValueError:
            raise CommandError(
                f"--since {since!r} is not a date like 2026-01-01 or a time like 2026-01-01T09:00:00+00:00"
            ) from None
        if moment.tzinfo is None:
            moment = timezone.make_aware(moment)
        try:
            shop = shop_named(name=shop_name) if shop_name else None
        except ShopNotSaid as error:
            raise CommandError(str(error)) from None
        if shop is None:
            keyed = shops_with_key(platform=platform)
            if len(keyed) != 1:
                names = ", ".join(shop.name for shop in keyed)
                raise CommandError(
                    f"Several shops have a key here: say which with --shop ({names})."
                    if keyed
                    else "No shop has a key here: set SHOPIFY_ADMIN_ACCESS_TOKEN and SHOPIFY_SHOP_DOMAIN, or "
                    "WOOCOMMERCE_URL, WOOCOMMERCE_CONSUMER_KEY and WOOCOMMERCE_CONSUMER_SECRET, or a shop's "
                    "own key on its page in admin (docs/store-developers.md)."
                )
            shop = keyed[0]
        label = f"{shop} ({shop.get_platform_display()})"

        bar = tqdm(unit=" orders", disable=no_progress, file=sys.stderr)

        def progress(report: SyncReport) -> None:
            bar.total = report.total
            bar.update(report.read - bar.n)

        try:
            report = shop_sync(shop=shop, since=moment, progress=progress)
        except PlatformError as error:
            # Refused before a page was read (no key reaches the shop): nothing to resume.
            again = "" if error.status == 400 and not bar.n else " Run it again to resume."
            raise CommandError(f"{label}: the sync stopped: {error}.{again}") from None
        finally:
            bar.close()
        said = ", ".join(
            f"{count} {ShopEventOutcome(outcome).label.lower()}"
            for outcome, count in sorted(report.outcomes.items())
        )
        self.stdout.write(
            f"{report.read} orders read from {label}: {said or 'none applied'}; "
            f"{report.already} already received."
            + (f" {report.failed} could not be applied now: kept, and tried again." if report.failed else "")
        )
