from django.contrib import admin
from django.urls import include, path

from bookly import views

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
    path("", include("support.web.urls")),
]
