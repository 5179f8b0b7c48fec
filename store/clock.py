"""The store's notion of "today"."""

from datetime import date

from django.conf import settings
from django.utils import timezone

# The day the demo fixture's dates are built around (fixtures/demo.json).
DEMO_TODAY = date(2026, 4, 14)


def store_today() -> date:
    """Today's date for business rules: BOOKLY_TODAY when set, else the real local date."""
    return settings.BOOKLY_TODAY or timezone.localdate()


def store_clock_is_frozen() -> bool:
    return settings.BOOKLY_TODAY is not None
