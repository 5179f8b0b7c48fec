from django.contrib import admin
from rest_framework_api_key.admin import APIKeyModelAdmin
from rest_framework_api_key.models import APIKey

from connection.models import StoreApiKey

# The library's own key model is unused: the store API takes only StoreApiKey.
admin.site.unregister(APIKey)


@admin.register(StoreApiKey)
class StoreApiKeyAdmin(APIKeyModelAdmin):
    """Superusers make a key for the shop's backend (shown once, in the message after saving), see when
    each was last used, and revoke one (for good)."""

    list_display = [*APIKeyModelAdmin.list_display, "last_used_at"]
    list_filter = ["revoked", "created"]

    def get_readonly_fields(self, request, obj=None):
        return (*super().get_readonly_fields(request, obj), "last_used_at")
