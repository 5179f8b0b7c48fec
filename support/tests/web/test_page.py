"""The chat page without JavaScript: what it shows, post/redirect/get, errors in words, escaping."""

import io
import re
from unittest import mock

import pytest
from django.conf import settings
from django.contrib.sessions.models import Session
from django.core.management import call_command
from django.utils.html import escape

from policies.models import PolicyEntry
from support.conversations.handoff import conversation_staff_reply
from support.conversations.services import TurnInProgress
from support.llm.types import ModelFailed, ModelUnavailable
from support.models import Conversation
from support.web.page import message_html

pytestmark = pytest.mark.usefixtures("demo_data", "offline")

SHIPPING_QUESTION = "How long does shipping take?"
XSS = "<img src=x onerror=alert(1)>"


def page_html(client) -> str:
    response = client.get("/")
    assert response.status_code == 200
    return response.content.decode()


def transcript_html(html: str) -> str:
    """The transcript's part of the page, without the CSRF tokens of its vote forms (new on every render)."""
    transcript = html.split('id="transcript"', 1)[1].split("</section>", 1)[0]
    return re.sub(r'name="csrfmiddlewaretoken" value="[^"]*"', "", transcript)


def textarea_value(html: str) -> str:
    found = re.search(r'<textarea id="message"[^>]*>(.*?)</textarea>', html, re.S)
    assert found is not None
    return found.group(1)


def test_the_page_says_it_is_an_automated_assistant_and_what_it_helps_with(client):
    html = page_html(client)
    assert "automated assistant" in html
    for topic in ("Order status", "Returns", "Store policies"):
        assert f"<strong>{topic}</strong>" in html


def test_suggested_questions_are_submit_buttons_of_the_message_form(client):
    html = page_html(client)
    buttons = re.findall(r"<button[^>]*name=\"suggestion\"[^>]*>", html)
    assert len(buttons) >= 3
    for button in buttons:
        assert 'type="submit"' in button and 'form="composer"' in button and "formnovalidate" in button


def test_the_forms_message_box_send_talk_to_a_person_and_start_a_new_conversation(client):
    html = page_html(client)
    assert '<form id="composer" class="composer" method="post" action="/chat/send"' in html
    assert '<label for="message"' in html and '<textarea id="message" name="message"' in html
    assert ">Send</button>" in html
    assert 'method="post" action="/chat/handoff"' in html and ">Talk to a person</button>" in html
    assert 'method="post" action="/chat/reset"' in html and "Start a new conversation" in html
    assert 'method="post" action="/chat/feedback"' in html and "Rate this conversation" in html
    # Each form, the vote template and the rating included.
    assert html.count('name="csrfmiddlewaretoken"') == html.count('method="post"') == 5


def test_the_offline_notice_tells_customers_in_plain_words_and_operators_nothing(client):
    html = page_html(client)
    notice = re.search(r'<p id="offline-notice"[^>]*>(.*?)</p>', html, re.S)
    assert notice is not None
    assert " hidden" not in notice.group(0).split(">", 1)[0]
    assert "A simpler built-in assistant is answering right now." in notice.group(1)
    for instruction in ("ANTHROPIC_API_KEY", ".env", "restart", "Claude"):
        assert instruction not in html


def test_offline_notice_is_hidden_when_claude_answers(client, claude):
    html = page_html(client)
    assert re.search(r'<p id="offline-notice"[^>]*\shidden>', html)


def test_operators_learn_how_to_connect_claude_from_the_console_and_admin(client, staff_user, settings):
    out = io.StringIO()
    call_command("assistant", stdout=out)
    assert "set ANTHROPIC_API_KEY in .env" in out.getvalue()
    client.force_login(staff_user)
    assert "To connect Claude, set ANTHROPIC_API_KEY" in client.get("/admin/").content.decode()

    settings.BOOKLY_LLM = "anthropic"
    settings.ANTHROPIC_API_KEY = "sk-ant-test-not-a-key"
    out = io.StringIO()
    call_command("assistant", stdout=out)
    assert out.getvalue().strip() == f"Assistant: Claude ({settings.ANTHROPIC_MODEL})."
    assert "offline-model-notice" not in client.get("/admin/").content.decode()


def test_dates_and_codes_in_a_reply_do_not_break_across_lines():
    html = message_html(text="Order BK-10042 arrived 2026-03-30; return RMA-7KQ2XW9P <b>now</b>.")
    assert html == (
        'Order <span class="nobreak">BK-10042</span> arrived <span class="nobreak">2026-03-30</span>; '
        'return <span class="nobreak">RMA-7KQ2XW9P</span> &lt;b&gt;now&lt;/b&gt;.'
    )


def test_the_page_loads_only_its_own_files_and_has_no_inline_script_or_style(client):
    html = page_html(client)
    assert '<link rel="stylesheet" href="/static/support/bookly.css">' in html
    assert '<script src="/static/support/chat.js" defer></script>' in html
    assert '<meta name="viewport" content="width=device-width, initial-scale=1, ' in html
    for url in re.findall(r'(?:src|href|action)="([^"]*)"', html):
        assert url.startswith(("/", "#", "?")) and not url.startswith("//"), url
    assert re.findall(r"<script(?![^>]*\ssrc=)", html) == []
    assert "<style" not in html and " style=" not in html
    assert re.search(r"\son[a-z]+=", html) is None


@pytest.mark.parametrize("path", ["/static/support/chat.js", "/static/support/bookly.css"])
def test_static_files_are_served(client, path):
    response = client.get(path)
    assert response.status_code == 200


def test_sending_redirects_back_and_the_page_shows_the_turn(client):
    response = client.post("/chat/send", {"message": SHIPPING_QUESTION})
    assert response.status_code == 302
    assert response["Location"] == "/#latest"

    html = transcript_html(page_html(client))
    assert SHIPPING_QUESTION in html
    assert escape(PolicyEntry.objects.get(topic="shipping").text) in html
    # A reload shows it again: the transcript comes from the database.
    assert transcript_html(page_html(client)) == html


def test_a_suggestion_sends_its_question_and_keeps_what_was_typed(client):
    client.post("/chat/send", {"suggestion": SHIPPING_QUESTION, "message": "my half-typed question"})
    html = page_html(client)
    assert SHIPPING_QUESTION in transcript_html(html)
    assert "half-typed" not in transcript_html(html)
    assert textarea_value(html) == "my half-typed question"


def test_an_invalid_message_is_said_in_words_and_the_text_stays_in_the_box(client):
    client.post("/chat/send", {"message": SHIPPING_QUESTION})
    too_long = "x" * 4001
    response = client.post("/chat/send", {"message": too_long})
    assert response.status_code == 302

    html = page_html(client)
    assert "Messages can be at most 4000 characters. Please shorten yours." in html
    assert 'role="alert"' in html
    assert textarea_value(html) == too_long
    # Shown once: the next visit starts clean.
    assert textarea_value(page_html(client)) == ""


def test_a_new_visitors_refused_message_is_answered_by_the_page_and_makes_no_session(client):
    too_long = "x" * 4001
    response = client.post("/chat/send", {"message": too_long})
    assert response.status_code == 400
    html = response.content.decode()
    assert "Messages can be at most 4000 characters. Please shorten yours." in html
    assert textarea_value(html) == too_long
    assert not Session.objects.exists()


@pytest.mark.parametrize(
    ("failure", "words"),
    [
        (TurnInProgress(), "I'm still answering your previous message."),
        (ModelUnavailable("overloaded", retry_after=5), "The assistant is very busy right now."),
        (ModelFailed("API error 400"), "The assistant ran into a problem."),
        (RuntimeError("a bug"), "Something went wrong on our side while answering that"),
    ],
)
def test_a_failed_turn_is_said_in_words_and_the_text_stays_in_the_box(client, failure, words):
    client.post("/chat/send", {"message": SHIPPING_QUESTION})
    with mock.patch("support.web.page.conversation_take_turn", side_effect=failure):
        response = client.post("/chat/send", {"message": "Where is my order?"})
    assert response.status_code == 302

    html = page_html(client)
    assert escape(words) in html
    assert "a bug" not in html
    assert textarea_value(html) == "Where is my order?"


def test_start_a_new_conversation_clears_the_transcript(client):
    client.post("/chat/send", {"message": SHIPPING_QUESTION})
    response = client.post("/chat/reset")
    assert response.status_code == 302 and response["Location"] == "/"

    html = page_html(client)
    assert "You started a new conversation." in html
    assert 'class="message ' not in transcript_html(html)
    assert Conversation.objects.get().ended_at is not None


def test_a_customer_message_with_markup_is_shown_as_text(client):
    client.post("/chat/send", {"message": XSS})
    html = transcript_html(page_html(client))
    assert "&lt;img src=x onerror=alert(1)&gt;" in html
    assert "<img" not in html


def test_replies_are_escaped_and_keep_their_line_breaks(client):
    reply = "<script>alert(1)</script>\nSecond line"
    with mock.patch(
        "support.web.page.conversation_transcript", return_value=[{"role": "assistant", "text": reply}]
    ):
        html = transcript_html(page_html(client))
    assert '<p class="message__text">&lt;script&gt;alert(1)&lt;/script&gt;\nSecond line</p>' in html


def test_the_reply_text_keeps_its_line_breaks_on_screen():
    # The transcript is text in a <p>; only this rule shows the reply's own line breaks.
    css = (settings.BASE_DIR / "static" / "support" / "bookly.css").read_text()
    found = re.search(r"\.message__text \{([^}]*)\}", css)
    assert found is not None
    rule = found.group(1)
    assert "white-space: pre-wrap" in rule


def test_sending_needs_post(client):
    assert client.get("/chat/send").status_code == 405
    assert client.get("/chat/reset").status_code == 405


def test_favicon_redirects_to_the_static_icon(client):
    response = client.get("/favicon.ico")
    assert response.status_code == 301 and response["Location"] == "/static/support/favicon.svg"


def test_talk_to_a_person_without_javascript(client, django_user_model):
    response = client.post("/chat/handoff")
    assert response.status_code == 302 and response["Location"].endswith("#handoff")
    html = page_html(client)
    assert "Our team is not in the chat right now." in html
    assert "Reload this page to see new replies from our team." in html
    assert 'name="email" type="email"' in html and ">Save my email address</button>" in html

    client.post("/chat/send", {"message": "My book arrived soaked"})
    conversation_staff_reply(
        conversation=Conversation.objects.get(),
        user=django_user_model.objects.create_user(username="ana", first_name="Ana"),
        text=f"So sorry! {XSS}",
    )
    html = transcript_html(page_html(client))
    assert "My book arrived soaked" in html
    assert "Ana · Bookly support" in html and escape(f"So sorry! {XSS}") in html


def test_the_email_address_to_answer_at_is_checked_and_kept(client):
    client.post("/chat/handoff")
    client.post("/chat/handoff", {"email": "not an address"})
    assert "doesn&#x27;t look like an email address" in page_html(client)
    assert Conversation.objects.get().customer_email == ""

    client.post("/chat/handoff", {"email": "reader@example.com"})
    html = page_html(client)
    assert "We&#x27;ll also answer you at reader@example.com." in html
    # Nothing left to ask: the form (email box and button) is hidden while they wait.
    assert re.search(r'<form id="handoff-form"[^>]*\shidden>', html)
