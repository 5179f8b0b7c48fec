"""`manage.py shop_sync --since 2026-01-01`: the shop's orders changed since a date, read from its
platform (Shopify or WooCommerce, as configured) and applied as its webhooks' are. Resumable: run it
again and what was already received is skipped."""

import sys
from datetime import datetime

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone
from tqdm import tqdm

from connection.models import ShopEventOutcome, ShopPlatform
from connection.platform_http import PlatformError
from connection.shop_sync import shop_sync


def _configured() -> list[str]:
    found = []
    if settings.SHOPIFY_ADMIN_ACCESS_TOKEN and (
        settings.SHOPIFY_SHOP_DOMAIN or settings.SHOPIFY_ADMIN_API_URL
    ):
        found.append(ShopPlatform.SHOPIFY)
    if (
        settings.WOOCOMMERCE_URL
        and settings.WOOCOMMERCE_CONSUMER_KEY
        and settings.WOOCOMMERCE_CONSUMER_SECRET
    ):
        found.append(ShopPlatform.WOOCOMMERCE)
    return found


class Command(BaseCommand):
    help = "Read the shop's orders changed since a date from Shopify or WooCommerce and apply them."

    def add_arguments(self, parser):
        parser.add_argument("--since", required=True, help="a date (2026-01-01) or a time with its offset")
        parser.add_argument("--platform", choices=ShopPlatform.values, help="when both are configured")
        parser.add_argument("--no-progress", action="store_true", help="no progress bar (in logs, cron)")

    def handle(self, *args, since, platform, no_progress, **options):
        try:
            moment = datetime.fromisoformat(since)
        except ValueError:
            raise CommandError(
                f"--since {since!r} is not a date like 2026-01-01 or a time like 2026-01-01T09:00:00+00:00"
            ) from None
        if moment.tzinfo is None:
            moment = timezone.make_aware(moment)
        configured = _configured()
        if platform is None:
            if len(configured) != 1:
                raise CommandError(
                    "Configure one platform (SHOPIFY_ADMIN_ACCESS_TOKEN and SHOPIFY_SHOP_DOMAIN, or "
                    "WOOCOMMERCE_URL, WOOCOMMERCE_CONSUMER_KEY and WOOCOMMERCE_CONSUMER_SECRET), or name it "
                    "with --platform."
                )
            platform = configured[0]
        elif platform not in configured:
            raise CommandError(
                f"{ShopPlatform(platform).label} is not configured: see docs/store-developers.md."
            )

        bar = tqdm(unit=" orders", disable=no_progress, file=sys.stderr)

        def progress(report):
            bar.total = report.total
            bar.update(report.read - bar.n)

        try:
            report = shop_sync(platform=platform, since=moment, progress=progress)
        except PlatformError as error:
            raise CommandError(
                f"{ShopPlatform(platform).label} stopped the sync: {error}. Run it again to resume."
            ) from None
        finally:
            bar.close()
        said = ", ".join(
            f"{count} {ShopEventOutcome(outcome).label.lower()}"
            for outcome, count in sorted(report.outcomes.items())
        )
        self.stdout.write(
            f"{report.read} orders read from {ShopPlatform(platform).label}: {said or 'none applied'}; "
            f"{report.already} already received."
            + (f" {report.failed} could not be applied now: kept, and tried again." if report.failed else "")
        )
