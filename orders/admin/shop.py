"""The shops' page: the shops whose orders Bookly answers for, and the shape of their order numbers."""

from typing import TYPE_CHECKING, TypedDict

from django import forms
from django.contrib import admin
from django.db.models import Count, QuerySet
from django.http import HttpRequest

from orders.models import OrderSource, Shop
from orders.shops import shop_address


class _OrdersKept(TypedDict):
    orders_kept: int


if TYPE_CHECKING:
    from django_stubs_ext import WithAnnotations

    ShopWithOrders = WithAnnotations[Shop, _OrdersKept]


# What staff may set on a shop (the platform and address only while not known yet: ShopAdmin).
_EDITABLE = [
    "name",
    "platform",
    "address",
    "number_pattern",
    "number_example",
    "currency",
    "address_change_countries",
]


class ShopForm(forms.ModelForm):
    class Meta:
        model = Shop
        fields = _EDITABLE

    def clean_address(self) -> str:
        """As a delivery names the shop (orders.shops.shop_address), so that its deliveries find it."""
        named = self.cleaned_data.get("address", "")
        platform = self.cleaned_data.get("platform") or self.instance.platform
        if not named or platform not in (OrderSource.SHOPIFY, OrderSource.WOOCOMMERCE):
            return named
        if not (address := shop_address(platform=platform, named=named)):
            raise forms.ValidationError(
                "A Shopify shop's address is its myshopify.com domain; a WooCommerce site's, its web "
                "address (https://…)."
            )
        return address


@admin.register(Shop)
class ShopAdmin(admin.ModelAdmin):
    """The shops whose orders Bookly answers for: a platform's is made by its first signed delivery, others
    (a store API's) are added here; staff name them and say the shape of their order numbers. Where a
    shop's orders come from, and its address there, are fixed once it is made: changed, another shop's
    deliveries would come into it."""

    form = ShopForm
    list_display = ["name", "platform", "address", "numbers_like", "currency", "order_count"]
    list_filter = ["platform"]
    search_fields = ["name", "address"]
    fields = [*_EDITABLE, "created_at"]

    def get_readonly_fields(self, request: HttpRequest, obj: Shop | None = None) -> list[str]:
        if obj is None:
            return ["created_at"]
        # An address not known yet (a shop made before shops had one) may be given once.
        return ["platform", "address", "created_at"] if obj.address else ["platform", "created_at"]

    def get_queryset(self, request: HttpRequest) -> "QuerySet[ShopWithOrders]":
        return super().get_queryset(request).annotate(orders_kept=Count("orders"))

    @admin.display(description="orders", ordering="orders_kept")
    def order_count(self, shop: "ShopWithOrders") -> int:
        return shop.orders_kept

    @admin.display(description="numbers like", ordering="number_example")
    def numbers_like(self, shop: Shop) -> str:
        return shop.number_example
