from django.urls import path

from support import views

app_name = "support"

urlpatterns = [
    path("api/chat", views.chat, name="chat_api"),
    path("api/chat/reset", views.chat_reset, name="chat_reset"),
]
