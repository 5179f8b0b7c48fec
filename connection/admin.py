import json
from datetime import datetime
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.options import InlineModelAdmin
from django.db import models
from django.db.models import QuerySet
from django.http import HttpRequest
from django.urls import reverse
from django.utils.html import format_html
from django.utils.safestring import SafeString
from rest_framework_api_key.admin import APIKeyModelAdmin
from rest_framework_api_key.models import APIKey

from connection.deliveries import delivery_send_again, event_body, webhook_url_problem
from connection.models import (
    DeliveryStatus,
    ShopConnection,
    ShopEvent,
    ShopPlatform,
    ShopWrite,
    StoreApiKey,
    WebhookDelivery,
    WebhookEndpoint,
)
from connection.selectors import webhook_endpoint_list_with_counts
from connection.tasks import deliveries_queue
from orders.admin.base import ReadOnlyModelAdmin
from orders.admin.shop import ShopAdmin
from orders.models import EventType, Shop

if TYPE_CHECKING:
    from django.contrib.admin.options import _FieldsetSpec
    from django.utils.datastructures import _ListOrTuple

    from connection.selectors import EndpointWithCounts

# The library's own key model is unused: the store API takes only StoreApiKey.
admin.site.unregister(APIKey)

_SECRETS = ("webhook_secret", "access_token", "consumer_key", "consumer_secret")


class ShopConnectionForm(forms.ModelForm):
    """The shop's credentials, typed in and never shown again: a blank field keeps what is kept."""

    api_url = ShopConnection._meta.get_field("api_url").formfield(assume_scheme="https")

    class Meta:
        model = ShopConnection
        fields = [*_SECRETS, "api_url", "write_back"]
        widgets = {
            name: forms.PasswordInput(render_value=False, attrs={"autocomplete": "new-password"})
            for name in _SECRETS
        }

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for name in [name for name in _SECRETS if name in self.fields]:  # the shop's platform's own
            field = self.fields[name]
            kept = self.instance.pk is not None and bool(getattr(self.instance, name))
            said = "Set: blank keeps it, another replaces it." if kept else "Not set."
            field.help_text = f"{said} {field.help_text}".strip()

    def clean(self) -> dict[str, Any]:
        super().clean()  # a model form's: its cleaned data
        cleaned = self.cleaned_data
        if self.instance.pk is not None and (unreadable := self.instance.unreadable()):
            retyped = [name for name in unreadable if cleaned.get(name)]
            if len(retyped) < len(unreadable):
                raise forms.ValidationError(
                    "What is stored cannot be read with this DJANGO_SECRET_KEY: put the key it was saved "
                    "with in DJANGO_SECRET_KEY_FALLBACKS, or type every credential of this shop again."
                )
        for name in [name for name in _SECRETS if name in self.fields]:
            if not cleaned.get(name) and self.instance.pk is not None:
                cleaned[name] = getattr(self.instance, name)  # as kept: the form has not touched it yet
        return cleaned


class ShopConnectionInline(admin.StackedInline):
    """A Shopify or WooCommerce shop's own app or key (a business with several shops): superusers only
    (its permission); the settings' credentials serve a shop that has none."""

    model = ShopConnection
    form = ShopConnectionForm
    extra = 0
    max_num = 1

    # Superusers alone, whatever permissions a staff account is given: even shown read-only, the page
    # would carry the credentials.
    def has_view_permission(self, request: HttpRequest, obj: Shop | None = None) -> bool:
        return request.user.is_superuser

    has_add_permission = has_change_permission = has_delete_permission = has_view_permission

    # A platform's own keys only, once the shop's platform is known.
    _KEYS: dict[str, list[str]] = {
        ShopPlatform.SHOPIFY: ["access_token"],
        ShopPlatform.WOOCOMMERCE: ["consumer_key", "consumer_secret"],
    }

    def get_fieldsets(self, request: HttpRequest, obj: Shop | None = None) -> "_FieldsetSpec":
        keys = self._KEYS.get(obj.platform, []) if obj is not None else [*_SECRETS[1:]]
        description = (
            "This shop's own app or key, when the settings' (SHOPIFY_*, WOOCOMMERCE_*) are another shop's. "
            "Kept encrypted; never shown again."
        )
        return [
            (None, {"fields": ["webhook_secret", *keys, "api_url", "write_back"], "description": description})
        ]


admin.site.unregister(Shop)


@admin.register(Shop)
class ConnectedShopAdmin(ShopAdmin):
    """The shops' page, with each platform shop's own credentials."""

    inlines = [ShopConnectionInline]

    def get_inlines(self, request: HttpRequest, obj: Shop | None) -> "_ListOrTuple[type[InlineModelAdmin]]":
        return [] if obj is not None and obj.platform not in ShopPlatform.values else self.inlines


@admin.register(StoreApiKey)
class StoreApiKeyAdmin(APIKeyModelAdmin):
    """Superusers make a key for the shop's backend (shown once, in the message after saving), see when
    each was last used, and revoke one (for good)."""

    # The library's class attributes are typed as the tuples it sets (of six names, of one).
    list_display = [*APIKeyModelAdmin.list_display, "shop", "last_used_at"]  # type: ignore[assignment]
    list_filter = ["shop", "revoked", "created"]  # type: ignore[assignment]

    def get_readonly_fields(self, request: HttpRequest, obj: models.Model | None = None) -> tuple[str, ...]:
        # A key's shop is chosen when it is made: moved, it would reach another shop's orders unseen.
        made = ("shop",) if obj is not None else ()
        # The library's `obj` defaults to None, but is typed without it.
        return (*super().get_readonly_fields(request, obj), *made, "last_used_at")  # type: ignore[arg-type]


class WebhookEndpointForm(forms.ModelForm):
    url = forms.URLField(max_length=500, assume_scheme="https", label="URL")
    event_types = forms.MultipleChoiceField(
        choices=EventType.choices,
        widget=forms.CheckboxSelectMultiple,
        required=False,
        help_text="None chosen: every event.",
    )

    class Meta:
        model = WebhookEndpoint
        fields = ["url", "shop", "event_types", "description", "is_active"]

    def clean_url(self) -> str:
        url = self.cleaned_data["url"].strip()
        if problem := webhook_url_problem(url):
            raise forms.ValidationError(f"The URL {problem}.")
        return url


@admin.register(WebhookEndpoint)
class WebhookEndpointAdmin(admin.ModelAdmin):
    """Superusers add the store's receivers (the signing secret is shown once, after saving), choose
    their events, and turn one off; its deliveries are a click away."""

    form = WebhookEndpointForm
    list_display = ["url", "shop", "is_active", "events", "failed", "waiting", "created_at"]
    list_filter = ["is_active"]

    def get_queryset(self, request: HttpRequest) -> "QuerySet[EndpointWithCounts]":
        return webhook_endpoint_list_with_counts()

    @admin.display(description="events")
    def events(self, endpoint: WebhookEndpoint) -> str:
        return ", ".join(endpoint.event_types) or "all"

    @admin.display(description="failed deliveries", ordering="failed_count")
    def failed(self, endpoint: "EndpointWithCounts") -> SafeString:
        return self._deliveries_link(endpoint, endpoint.failed_count, DeliveryStatus.FAILED)

    @admin.display(description="waiting deliveries", ordering="waiting_count")
    def waiting(self, endpoint: "EndpointWithCounts") -> SafeString:
        return self._deliveries_link(endpoint, endpoint.waiting_count, DeliveryStatus.PENDING)

    def _deliveries_link(self, endpoint: WebhookEndpoint, count: int, status: str) -> SafeString:
        query = urlencode({"endpoint__id__exact": endpoint.pk, "status__exact": status})
        changelist = reverse("admin:connection_webhookdelivery_changelist")
        return format_html('<a href="{}?{}">{}</a>', changelist, query, count)

    def save_model(
        self,
        request: HttpRequest,
        obj: WebhookEndpoint,
        form: "forms.ModelForm[WebhookEndpoint]",
        change: bool,
    ) -> None:
        super().save_model(request, obj, form, change)
        if not change:
            messages.warning(
                request,
                format_html(
                    "The signing secret of this endpoint, shown only now: <code>{}</code> Keep it where the "
                    "receiver can read it (it verifies every event with it).",
                    obj.secret,
                ),
            )


@admin.register(WebhookDelivery)
class WebhookDeliveryAdmin(ReadOnlyModelAdmin):
    """The delivery log: each event to each endpoint, how far it got, the receiver's last answer; staff
    send one again (failed, or lost by the receiver) with its same webhook-id."""

    list_display = [
        "event_type",
        "endpoint",
        "status",
        "attempts",
        "last_status_code",
        "last_attempt_at",
        "next",
    ]
    list_filter = ["status", "endpoint"]
    list_select_related = ["event", "endpoint"]
    search_fields = ["event__public_id"]
    actions = ["send_again"]
    fields = readonly_fields = (
        "event_id_and_type",
        "endpoint",
        "status",
        "attempts",
        "last_attempt_at",
        "last_status_code",
        "last_response",
        "next",
        "delivered_at",
        "body",
    )

    @admin.display(description="event", ordering="event__type")
    def event_type(self, delivery: WebhookDelivery) -> str:
        return delivery.event.type

    @admin.display(description="event")
    def event_id_and_type(self, delivery: WebhookDelivery) -> str:
        event = delivery.event
        return f"{event.public_id} ({event.type}, {event.occurred_at:%Y-%m-%d %H:%M:%S})"

    @admin.display(description="next attempt", ordering="next_attempt_at")
    def next(self, delivery: WebhookDelivery) -> datetime | str:
        return delivery.next_attempt_at if delivery.status == DeliveryStatus.PENDING else "—"

    @admin.display(description="what the endpoint receives")
    def body(self, delivery: WebhookDelivery) -> SafeString:
        return format_html(
            "<pre>{}</pre>", json.dumps(json.loads(event_body(event=delivery.event)), indent=2)
        )

    def has_send_again_permission(self, request: HttpRequest) -> bool:
        return request.user.has_perm("connection.change_webhookdelivery")

    @admin.action(description="Send again", permissions=["send_again"])
    def send_again(self, request: HttpRequest, queryset: QuerySet[WebhookDelivery]) -> None:
        ids = [delivery.pk for delivery in queryset if delivery_send_again(delivery=delivery)]
        deliveries_queue(delivery_ids=ids)
        skipped = queryset.count() - len(ids)
        messages.success(
            request,
            f"{len(ids)} deliver{'y' if len(ids) == 1 else 'ies'} sent again"
            + (f"; {skipped} being sent at this moment, left alone." if skipped else "."),
        )


@admin.register(ShopEvent)
class ShopEventAdmin(ReadOnlyModelAdmin):
    """What the shop platform sent (its webhooks, signature checked) and what became of each: the order
    created, updated or unchanged, or why the intake refused it, by field."""

    list_display = ["received_at", "platform", "topic", "order_number", "outcome", "detail"]
    list_filter = ["platform", "outcome", "topic"]
    search_fields = ["order_number", "delivery_id"]
    fields = readonly_fields = (
        "platform",
        "topic",
        "delivery_id",
        "received_at",
        "applied_at",
        "order_number",
        "outcome",
        "detail",
        "body",
    )


@admin.register(ShopWrite)
class ShopWriteAdmin(ReadOnlyModelAdmin):
    """Each change Bookly asked of the shop platform that keeps the order: its attempts, when the next
    is due, and what the shop answered (support staff see the outcome on the order itself)."""

    list_display = ["created_at", "platform", "change", "outcome", "attempts", "next_attempt_at", "answer"]
    list_filter = ["platform", "outcome"]
    search_fields = ["change__order__number"]
    list_select_related = ["change__order"]
    fields = readonly_fields = (
        "change",
        "platform",
        "created_at",
        "outcome",
        "attempts",
        "next_attempt_at",
        "finished_at",
        "answer",
    )
