import base64
import re
import secrets
from typing import Any

from django.core.exceptions import ObjectDoesNotExist, ValidationError
from django.db import models, transaction
from django.utils import timezone
from rest_framework_api_key.models import AbstractAPIKey

from connection.fields import SecretField
from connection.platform_http import PlatformError, platform_address
from orders.shops import shop_writes_back_set


class StoreApiKey(AbstractAPIKey):
    """A key one shop's backend presents to the store API (`Authorization: Bearer <key>`): shown once
    when made, kept only as a hash (djangorestframework-api-key), revocable, its last use recorded."""

    # The shop whose orders and returns the key reaches; another shop's are not there for it (404).
    shop = models.ForeignKey("orders.Shop", on_delete=models.PROTECT, related_name="store_api_keys")
    # Moved on at most once a minute: a busy shop should not write a row on every request.
    last_used_at = models.DateTimeField(null=True, blank=True)

    class Meta(AbstractAPIKey.Meta):
        verbose_name = "store API key"
        verbose_name_plural = "store API keys"


def _new_secret() -> str:
    """A Standard Webhooks secret: whsec_ and 32 random bytes in base64."""
    return "whsec_" + base64.b64encode(secrets.token_bytes(32)).decode()


class WebhookEndpoint(models.Model):
    """A URL of the store's systems that receives Bookly's events, signed with its own secret (shown once
    when made: keep it where the receiver can read it)."""

    url = models.URLField(max_length=500)
    # The event types it receives; empty: every type.
    event_types = models.JSONField(default=list, blank=True)
    description = models.CharField(max_length=200, blank=True)
    # The shop whose orders' events it receives (a backend of that shop); empty: every shop's. Events of
    # no order's (a conversation handed over) go to every endpoint.
    shop = models.ForeignKey(
        "orders.Shop",
        on_delete=models.PROTECT,
        related_name="+",
        null=True,
        blank=True,
        help_text="Only this shop's orders' events. Empty: every shop's.",
    )
    secret = models.CharField(max_length=80, default=_new_secret, editable=False)
    is_active = models.BooleanField("active", default=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        verbose_name = "webhook endpoint"

    def __str__(self) -> str:
        return self.url

    def wants(self, event_type: str, shop_id: int | None = None) -> bool:
        of_its_shop = self.shop_id is None or shop_id is None or shop_id == self.shop_id
        return of_its_shop and (not self.event_types or event_type in self.event_types)


class DeliveryStatus(models.TextChoices):
    PENDING = "pending", "Waiting to be sent"
    SENDING = "sending", "Being sent"
    DELIVERED = "delivered", "Delivered"
    FAILED = "failed", "Failed"


class WebhookDelivery(models.Model):
    """One event for one endpoint: sent until the endpoint answers 2xx, with back-off for about a day,
    then failed (staff can send it again). Every attempt is claimed first (see deliveries.delivery_claim)."""

    endpoint = models.ForeignKey(WebhookEndpoint, on_delete=models.CASCADE, related_name="deliveries")
    event = models.ForeignKey("orders.Event", on_delete=models.CASCADE, related_name="+")
    status = models.CharField(max_length=10, choices=DeliveryStatus.choices, default=DeliveryStatus.PENDING)
    attempts = models.PositiveSmallIntegerField(default=0)
    next_attempt_at = models.DateTimeField(default=timezone.now)
    # While an attempt is under way: when it is over for sure (a worker killed mid-attempt leaves it
    # SENDING; past this time it may be claimed again).
    lease_until = models.DateTimeField(null=True, blank=True)
    # When the delivery was last put on the task queue (the sweep does not queue it twice meanwhile).
    queued_at = models.DateTimeField(null=True, blank=True)
    last_attempt_at = models.DateTimeField(null=True, blank=True)
    last_status_code = models.PositiveSmallIntegerField(null=True, blank=True)
    # The start of the receiver's answer, or what stopped the attempt (a timeout, a refused address).
    last_response = models.TextField(blank=True)
    delivered_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-id"]
        verbose_name_plural = "webhook deliveries"
        constraints = [
            models.UniqueConstraint(fields=["endpoint", "event"], name="webhook_delivery_once_per_endpoint"),
            models.CheckConstraint(
                condition=models.Q(status__in=DeliveryStatus.values), name="webhook_delivery_status_valid"
            ),
        ]
        indexes = [models.Index(fields=["status", "next_attempt_at"], name="webhook_delivery_due")]

    def __str__(self) -> str:
        return f"{self.event} to {self.endpoint}"


class ShopPlatform(models.TextChoices):
    """A shop platform whose own webhooks Bookly receives (each in its room: connection.shopify …)."""

    SHOPIFY = "shopify", "Shopify"
    WOOCOMMERCE = "woocommerce", "WooCommerce"


# How a stored credential that no key here opens reads (django-fernet-encrypted-fields gives back the
# token itself): a Fernet token, base64 of version byte 0x80 and the rest.
FERNET_TOKEN_RE = re.compile(r"gAAAAA[A-Za-z0-9_-]{50,}={0,2}")


class ShopConnection(models.Model):
    """One shop's own platform credentials, for a business whose shops each have their own app or key (two
    Shopify shops, a second WooCommerce site): its deliveries are checked with its own webhook secret
    alone, and its orders read (shop_sync) and written back with its own key. A shop without one uses the
    settings' (SHOPIFY_*, WOOCOMMERCE_*) when they are for it. Kept encrypted in the database (Fernet,
    with a key derived from SECRET_KEY: django-fernet-encrypted-fields); never shown again once saved."""

    shop = models.OneToOneField("orders.Shop", on_delete=models.CASCADE, related_name="connection")
    # Shopify: the client secret of the shop's app; WooCommerce: the secret typed into its webhooks.
    webhook_secret = SecretField(
        max_length=200, null=True, blank=True,
        help_text="Shopify: the app's client secret. WooCommerce: the secret given to its webhooks.",
    )  # fmt: skip
    # Shopify's Admin API access token (read_orders; write_orders to write back).
    access_token = SecretField("Admin API access token (Shopify)", max_length=200, null=True, blank=True)
    # WooCommerce's REST API key (Read; Read/Write to write back).
    consumer_key = SecretField("consumer key (WooCommerce)", max_length=200, null=True, blank=True)
    consumer_secret = SecretField("consumer secret (WooCommerce)", max_length=200, null=True, blank=True)
    api_url = models.URLField(
        "API address", max_length=300, blank=True,
        help_text="Only when it is not the shop's own: Shopify's Admin API "
        "(https://your-shop.myshopify.com/admin/api/2025-07) behind a proxy; WooCommerce's site at another "
        "address.",
    )  # fmt: skip
    write_back = models.BooleanField(
        "changes made in the shop first",
        default=False,
        help_text="A cancellation or an address change asked in Bookly is made in the shop through this "
        "key before the customer is told it is done (Shopify write_orders, WooCommerce Read/Write).",
    )
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name = "connection"

    def __str__(self) -> str:
        return f"{self.shop}'s connection"

    def save(self, *args: Any, **kwargs: Any) -> None:
        if unreadable := self.unreadable():
            # Saved again, what no key here opens would be encrypted once more and lost for good.
            raise ValueError(f"{self.shop}'s {', '.join(unreadable)} cannot be read here: not saved")
        with transaction.atomic():
            super().save(*args, **kwargs)
            shop_writes_back_set(shop=self.shop, writes_back=self.write_back and self.has_api_key)

    def delete(self, *args: Any, **kwargs: Any) -> tuple[int, dict[str, int]]:
        with transaction.atomic():  # its row, then its shop's, as save() takes them: no deadlock
            deleted = super().delete(*args, **kwargs)
            shop_writes_back_set(shop=self.shop, writes_back=None)
            return deleted

    def clean(self) -> None:
        try:
            platform = self.shop.platform  # in admin, the shop being added with it, not saved yet
        except ObjectDoesNotExist:
            platform = ""
        if platform not in ShopPlatform.values:
            raise ValidationError("Only a Shopify or WooCommerce shop is connected with credentials.")
        if not self.shop.address:
            # Its deliveries are found by the address they name: without one, its secret opens none.
            raise ValidationError("Give the shop its address first (as its deliveries name it).")
        others = (
            ("consumer_key", "consumer_secret") if platform == ShopPlatform.SHOPIFY else ("access_token",)
        )
        if wrong := [field for field in others if getattr(self, field)]:
            label = ShopPlatform(platform).label
            raise ValidationError({field: f"A {label} shop has no such key." for field in wrong})
        if self.api_url:
            try:
                platform_address(self.api_url, "The API address")
            except PlatformError as error:
                raise ValidationError({"api_url": f"{error}."}) from None
        if self.write_back and not self.has_api_key:
            raise ValidationError(
                {"write_back": "Changes are made in the shop through its key: add the key."}
            )

    @property
    def has_api_key(self) -> bool:
        """Whether it holds a key for the shop's API (Shopify's token, or WooCommerce's key and secret)."""
        return bool(self.access_token or (self.consumer_key and self.consumer_secret))

    def unreadable(self) -> list[str]:
        """The credentials no key here opens (SECRET_KEY changed without SECRET_KEY_FALLBACKS)."""
        return [
            field
            for field in ("webhook_secret", "access_token", "consumer_key", "consumer_secret")
            if FERNET_TOKEN_RE.fullmatch(getattr(self, field) or "")
        ]


class ShopEventOutcome(models.TextChoices):
    """What became of a platform's event: the order's intake outcome, or why nothing was applied."""

    PENDING = "pending", "Not applied yet"
    CREATED = "created", "Order created"
    UPDATED = "updated", "Order updated"
    UNCHANGED = "unchanged", "Order unchanged"
    REFUSED = "refused", "Refused by the intake"
    # Its number is not in its shop's shape (a new shop's, not set yet): applied again when staff save
    # the shop (connection.shop_events.shop_events_retry_shape).
    OTHER_SHAPE = "other_shape", "Number not in its shop's shape"
    CONFLICT = "conflict", "Would undo a change made here"
    IGNORED = "ignored", "Not an order event Bookly applies"
    FAILED = "failed", "Failed every attempt"


class ShopEvent(models.Model):
    """One delivery of a shop platform's webhook, kept as received (signature verified) before its work
    is queued: Shopify waits five seconds for an answer, the order's intake can take longer. The
    platform's delivery id is unique, so a delivery sent again is applied once."""

    platform = models.CharField(max_length=20, choices=ShopPlatform.choices)
    # The shop the delivery named (connection.shops); blank only for one kept before shops were.
    shop = models.ForeignKey("orders.Shop", on_delete=models.PROTECT, related_name="+", null=True, blank=True)
    delivery_id = models.CharField(max_length=100)
    topic = models.CharField(max_length=100)
    body = models.JSONField()
    received_at = models.DateTimeField(default=timezone.now)
    applied_at = models.DateTimeField(null=True, blank=True)
    outcome = models.CharField(
        max_length=20, choices=ShopEventOutcome.choices, default=ShopEventOutcome.PENDING
    )
    # Times the sweep queued it again after its task was lost or failed (bounded: see shop_events).
    attempts = models.PositiveSmallIntegerField(default=0)
    order_number = models.CharField(max_length=40, blank=True)
    # What the intake said, for staff: each problem by field, or the conflict's words.
    detail = models.TextField(blank=True)

    class Meta:
        ordering = ["-received_at", "-id"]
        verbose_name = "shop event"
        constraints = [
            models.UniqueConstraint(fields=["platform", "delivery_id"], name="shop_event_delivered_once"),
            models.CheckConstraint(
                condition=models.Q(platform__in=ShopPlatform.values), name="shop_event_platform"
            ),
            models.CheckConstraint(
                condition=models.Q(outcome__in=ShopEventOutcome.values), name="shop_event_outcome_valid"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.get_platform_display()} {self.topic} {self.delivery_id}"


class ShopWriteOutcome(models.TextChoices):
    PENDING = "pending", "Not made yet"
    MADE = "made", "Made in the shop"
    REFUSED = "refused", "Refused by the shop"
    FAILED = "failed", "The shop could not be reached"


class ShopWrite(models.Model):
    """Bookly asking the shop platform that keeps an order to make a change (an orders.OrderChange
    waiting for the shop): each attempt, when the next is due, and what the shop last answered. Once
    the shop made it, the change is Bookly's (orders.services.order_change_shop_made)."""

    change = models.OneToOneField("orders.OrderChange", on_delete=models.CASCADE, related_name="shop_write")
    platform = models.CharField(max_length=20, choices=ShopPlatform.choices)
    created_at = models.DateTimeField(default=timezone.now)
    attempts = models.PositiveSmallIntegerField(default=0)
    # When the next attempt may start: a task that finds it later does nothing (another has it).
    next_attempt_at = models.DateTimeField(default=timezone.now, db_index=True)
    outcome = models.CharField(
        max_length=20, choices=ShopWriteOutcome.choices, default=ShopWriteOutcome.PENDING
    )
    finished_at = models.DateTimeField(null=True, blank=True)
    # What the shop (or the network) last said, for staff.
    answer = models.TextField(blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name = "write to the shop"
        verbose_name_plural = "writes to the shop"
        constraints = [
            models.CheckConstraint(
                condition=models.Q(platform__in=ShopPlatform.values), name="shop_write_platform"
            ),
            models.CheckConstraint(
                condition=models.Q(outcome__in=ShopWriteOutcome.values), name="shop_write_outcome_valid"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.get_platform_display()}: {self.change}"
