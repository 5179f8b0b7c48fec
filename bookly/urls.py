from django.contrib import admin
from django.urls import include, path

from bookly import views
from connection.receivers import shopify_webhook, woocommerce_webhook

admin.site.site_header = "Bookly support"
admin.site.site_title = "Bookly support"
admin.site.index_title = "Orders, returns and FAQ"

handler400 = "bookly.views.bad_request"

urlpatterns = [
    path("admin/", admin.site.urls),
    path("health", views.health, name="health"),
    path("metrics", views.metrics, name="metrics"),
    path("favicon.ico", views.favicon),
    path("api/store/v1/", include("connection.api.urls")),
    path("connect/shopify/webhooks", shopify_webhook, name="shopify_webhook"),
    path("connect/woocommerce/webhooks", woocommerce_webhook, name="woocommerce_webhook"),
    path("", include("support.web.urls")),
]
