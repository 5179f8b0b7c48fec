from django.contrib import admin
from django.urls import include, path

from bookly.health import health
from support import page_views

admin.site.site_header = "Bookly support"
admin.site.site_title = "Bookly support"
admin.site.index_title = "Orders, returns and FAQ"

urlpatterns = [
    path("admin/", admin.site.urls),
    path("", page_views.chat_page, name="chat"),
    path("chat/send", page_views.chat_send, name="chat_send"),
    path("chat/reset", page_views.chat_page_reset, name="chat_page_reset"),
    path("health", health, name="health"),
    path("favicon.ico", page_views.favicon),
    path("", include("support.urls")),
]
