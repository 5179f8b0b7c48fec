from django.urls import path

from support.web import api, page

app_name = "support"

urlpatterns = [
    path("", page.chat_page, name="chat"),
    path("widget.js", page.widget_script, name="widget_script"),
    path("chat/send", page.chat_send, name="chat_send"),
    path("chat/reset", page.chat_page_reset, name="chat_page_reset"),
    path("chat/handoff", page.chat_handoff, name="chat_handoff_page"),
    path("chat/feedback", page.chat_feedback, name="chat_feedback_page"),
    path("api/chat", api.chat, name="chat_api"),
    path("api/chat/reset", api.chat_reset, name="chat_reset"),
    path("api/chat/sign-in", api.chat_sign_in, name="chat_sign_in"),
    path("api/chat/sign-out", api.chat_sign_out, name="chat_sign_out"),
    path("api/chat/handoff", api.chat_handoff, name="chat_handoff"),
    path("api/chat/feedback", api.chat_feedback, name="chat_feedback"),
]
