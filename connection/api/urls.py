from django.urls import path, re_path
from drf_spectacular.views import SpectacularAPIView

from connection.api import views

app_name = "store_api"

urlpatterns = [
    path("orders", views.OrderListView.as_view(), name="orders"),
    path("orders/<str:number>", views.OrderView.as_view(), name="order"),
    path("returns", views.ReturnListView.as_view(), name="returns"),
    path("returns/<str:rma_number>", views.ReturnView.as_view(), name="return"),
    # Public: the schema says how to call the API, never anything of the store's data.
    path(
        "schema", SpectacularAPIView.as_view(authentication_classes=[], permission_classes=[]), name="schema"
    ),
    # Last: any other address is a JSON 404 ("orders/" with its trailing slash among them).
    re_path(r"^.*$", views.NoSuchPath.as_view()),
]
