from django.contrib import admin
from django.urls import include, path

admin.site.site_header = "Bookly support"
admin.site.site_title = "Bookly support"
admin.site.index_title = "Orders, returns and FAQ"

urlpatterns = [
    path("admin/", admin.site.urls),
    path("", include("support.urls")),
]
