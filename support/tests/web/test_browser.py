"""The chat page in a real headless Chromium, against the live server and the offline model.

Needs Debian's Chromium (`apt-get install -y chromium`); skipped with that hint
when it is missing. Screenshots go to test-artifacts/.
"""

import json
import re
import threading
import time
from datetime import datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import quote

import pytest
from django.core.cache import cache
from django.db import connections
from django.utils import timezone
from playwright.sync_api import (
    ConsoleMessage,
    Dialog,
    FloatRect,
    Locator,
    Page,
    ViewportSize,
    expect,
    sync_playwright,
)

from orders import services as order_services
from orders.models import Order, OrderChange, ReturnRecord
from orders.services import order_change_shop_failed
from policies.models import PolicyEntry
from support.assistant.prompts import REFUSAL_TEMPLATE
from support.assistant.understanding.wording import NO_POLICY_REPLY
from support.conversations.handoff import conversation_assign, conversation_staff_reply
from support.conversations.identity import customer_signature
from support.conversations.models import Conversation
from support.staff.models import SavedReply

CHROMIUM = Path("/usr/bin/chromium")
LAUNCH_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]
ARTIFACTS = Path(__file__).resolve().parents[3] / "test-artifacts"
WIDGET_SCRIPT = Path(__file__).resolve().parents[3] / "static" / "support" / "widget.js"
DESKTOP: ViewportSize = {"width": 1100, "height": 900}
PHONE: ViewportSize = {"width": 360, "height": 780}
LAPTOP: ViewportSize = {"width": 1280, "height": 800}
PHONE_SMALL: ViewportSize = {"width": 360, "height": 740}
STAFF_LOGIN = ("agent", "agent-pass-1234")  # the root conftest's staff_user
SARAH = "sarah.chen@example.com"
XSS = "<img src=x onerror=alert(1)>"

# The init script runs outside the page's CSP, so it can report every violation
# the policy causes on the page itself.
REPORT_CSP_VIOLATIONS = """
document.addEventListener("securitypolicyviolation", (event) => {
  console.error(`CSP violation: ${event.violatedDirective} blocked ${event.blockedURI || "inline"}`);
});
"""

# live_server serves from other threads: committed data. serialized_rollback
# restores what migrations created (the support staff group) after each flush.
pytestmark = [
    pytest.mark.browser,
    # What a page shows and does is the same on either database: the SQLite leg alone drives the browser.
    pytest.mark.one_leg,
    pytest.mark.django_db(transaction=True, serialized_rollback=True),
    pytest.mark.usefixtures("demo_data"),
]


@pytest.fixture(scope="module")
def browser():
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} not installed: apt-get install -y chromium")
    # Playwright's sync API keeps an asyncio loop on this thread, which Django
    # takes for async code; the ORM calls in these tests are ordinary sync ones.
    # It also resumes this code in another contextvars context, where Django
    # would open new connection objects without pytest-django's snapshot for
    # serialized_rollback: keep using the test database's own ones.
    test_connections = {alias: connections[alias] for alias in connections}
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
        with sync_playwright() as playwright:
            for alias, connection in test_connections.items():
                connections[alias] = connection
            browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=LAUNCH_ARGS)
            yield browser
            browser.close()


@pytest.fixture
def site(live_server, settings):
    settings.BOOKLY_LLM = "offline"
    cache.clear()  # rate-limit counters
    return live_server.url


class Tab:
    """A browser page with everything it logged as an error (console, uncaught, CSP)."""

    def __init__(self, context):
        self.context = context
        self.page: Page = context.new_page()
        self.errors: list[str] = []
        self.page.on("console", self._console)
        self.page.on("pageerror", lambda error: self.errors.append(f"uncaught: {error}"))
        self.dialogs: list[str] = []
        self.page.on("dialog", self._dialog)

    def _console(self, message: ConsoleMessage) -> None:
        if message.type == "error":
            self.errors.append(message.text)

    def _dialog(self, dialog: Dialog) -> None:
        self.dialogs.append(dialog.message)
        dialog.dismiss()


@pytest.fixture
def open_tab(browser, site):
    """Opens a tab in a fresh browser profile (its own cookies)."""
    contexts = []

    def open_(*, javascript=True, viewport=DESKTOP, **options) -> Tab:
        context = browser.new_context(
            base_url=site, java_script_enabled=javascript, viewport=viewport, **options
        )
        context.add_init_script(REPORT_CSP_VIOLATIONS)
        contexts.append(context)
        return Tab(context)

    yield open_
    for context in contexts:
        context.close()


@pytest.fixture
def tab(open_tab) -> Tab:
    tab = open_tab()
    tab.page.goto("/")
    return tab


def screenshot(page: Page, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


def replies(page: Page):
    return page.locator(".message--assistant .message__text")


def customer_messages(page: Page):
    return page.locator(".message--customer .message__text")


def send_with_js(page: Page, text: str) -> str:
    """Type a message, press Enter, and return the reply once the typing indicator is gone."""
    before = replies(page).count()
    box = page.get_by_label("Your message")
    box.fill(text)
    box.press("Enter")
    expect(replies(page)).to_have_count(before + 1)
    expect(page.locator("#typing")).to_have_text("")
    return replies(page).last.inner_text()


def send_without_js(page: Page, text: str) -> str:
    """Fill the form and press Send: the server answers and redirects back to the page."""
    page.get_by_label("Your message").fill(text)
    with page.expect_navigation():
        page.get_by_role("button", name="Send", exact=True).click()
    return replies(page).last.inner_text()


def staff_login(open_tab, next_url: str, *, init_script: str = "", **options) -> Tab:
    tab = open_tab(**options)
    if init_script:
        tab.context.add_init_script(init_script)
    page = tab.page
    page.goto(f"/admin/login/?next={next_url}")
    page.get_by_label("Username").fill(STAFF_LOGIN[0])
    page.get_by_label("Password").fill(STAFF_LOGIN[1])
    with page.expect_navigation():
        page.get_by_role("button", name="Log in").click()
    return tab


def test_whole_conversation_with_javascript(tab, open_tab, staff_user):
    page = tab.page
    expect(page.get_by_role("heading", level=1)).to_contain_text("support assistant")
    expect(page.get_by_text("automated assistant")).to_be_visible()
    expect(page.get_by_text("A simpler built-in assistant is answering right now.")).to_be_visible()

    # A suggested question sends itself.
    page.get_by_role("button", name="How long does shipping take?").click()
    expect(replies(page)).to_have_count(1)
    assert PolicyEntry.objects.get(topic="shipping").text in replies(page).last.inner_text()

    assert "order number" in send_with_js(page, "Where is my order?")
    assert "email" in send_with_js(page, "BK-10089")
    status = send_with_js(page, "james.murphy@example.com")
    assert "shipped" in status and "1Z999AA10987654321" in status

    summary = send_with_js(page, f"I want to return a book from BK-10042 because it arrived damaged. {SARAH}")
    assert "Would you like me to start this return?" in summary
    started = send_with_js(page, "Yes please")
    found = re.search(r"RMA-[A-Z0-9]+", started)
    assert found is not None
    rma_number = found.group()
    assert ReturnRecord.objects.filter(rma_number=rma_number, order__number="BK-10042").exists()

    refusal = send_with_js(page, "What's the weather like in Boston?")
    assert refusal == REFUSAL_TEMPLATE.format(topic="the weather")
    screenshot(page, "chat-desktop")
    assert tab.errors == []

    # Support staff see the new return in admin (and admin runs clean under the CSP).
    staff = staff_login(open_tab, "/admin/orders/returnrecord/")
    expect(staff.page.get_by_role("link", name=rma_number)).to_be_visible()
    staff.page.get_by_role("link", name=rma_number).click()
    expect(staff.page.get_by_text("it arrived damaged")).to_be_visible()
    screenshot(staff.page, "admin-return")
    assert staff.errors == []


@pytest.mark.slow
def test_a_customer_reaches_a_person_who_answers_then_hands_back(tab, open_tab, staff_user):
    staff_user.first_name = "Ana"
    staff_user.save()
    page = tab.page
    send_with_js(page, "Hello!")
    page.get_by_role("button", name="Talk to a person").click()
    notice = page.locator("#handoff-notice")
    expect(notice).to_contain_text("Our team is not in the chat right now")
    page.get_by_label("Your email address").fill("reader@example.com")
    page.get_by_role("button", name="Save my email address").click()
    expect(notice).to_contain_text("We'll also answer you at reader@example.com.")
    expect(page.get_by_text("New replies from our team appear here as they arrive.")).to_be_visible()

    # While waiting, words are kept for the person and nothing answers them.
    box = page.get_by_label("Your message")
    box.fill("My parcel arrived soaked")
    box.press("Enter")
    expect(customer_messages(page)).to_have_count(2)
    expect(page.locator("#typing")).to_have_text("")
    expect(replies(page)).to_have_count(1)

    staff = staff_login(open_tab, "/admin/")
    admin = staff.page
    expect(admin.locator("#waiting-count")).to_contain_text("1 customer waiting for a person")
    admin.locator("#waiting-count a").click()
    expect(admin.get_by_text(re.compile(r"Waiting for a person, \d+"))).to_be_visible()
    screenshot(admin, "admin-inbox")
    admin.get_by_role("link", name=re.compile(r"Conversation \d+")).click()
    expect(admin.locator("#transcript")).to_contain_text("My parcel arrived soaked")
    with admin.expect_navigation():
        admin.get_by_role("button", name="Take it (answer it myself)").click()
    expect(admin.get_by_text("You are answering this conversation")).to_be_visible()
    admin.get_by_label(re.compile("Reply to the customer")).fill("So sorry! A new copy is on its way.")
    admin.get_by_role("button", name="Send reply").click()
    expect(admin.get_by_text("Your reply was sent.")).to_be_visible()
    expect(admin.locator("#transcript .support-entry--staff")).to_contain_text("A new copy is on its way.")
    screenshot(admin, "admin-conversation")

    # The customer's page shows it without a reload.
    staff_message = page.locator(".message--staff")
    expect(staff_message.locator(".message__text")).to_have_text(
        ["So sorry! A new copy is on its way."], timeout=20_000
    )
    expect(staff_message.locator(".message__author")).to_have_text(
        [re.compile(r"^Ana · Bookly support \d\d:\d\d$")]
    )
    expect(notice).to_contain_text("A member of our team is answering you here.")
    screenshot(page, "chat-with-a-person")

    # And the customer's answer reaches the staff page without a reload, leaving a draft alone.
    draft = admin.get_by_label(re.compile("Reply to the customer"))
    draft.fill("Half-written answer")
    box.fill("Thank you, Ana!")
    box.press("Enter")
    expect(admin.locator("#transcript")).to_contain_text("Thank you, Ana!", timeout=20_000)
    expect(draft).to_have_value("Half-written answer")

    with admin.expect_navigation():
        admin.get_by_role("button", name="Hand back to the assistant").click()
    # Handed back: the page asks the customer how it went.
    expect(page.get_by_role("group", name="How did we do?")).to_be_visible(timeout=20_000)
    reply = send_with_js(page, "How long does shipping take?")
    assert PolicyEntry.objects.get(topic="shipping").text in reply
    assert tab.errors == []
    assert staff.errors == []


def test_a_change_the_store_did_not_make_shows_on_the_open_page_without_a_reload(tab, settings, monkeypatch):
    """Asked of Shopify, then refused while the customer's page is still open: the page, asking for news
    while the store is asked, shows it in our words without a reload."""
    settings.BOOKLY_CHANGES_THROUGH_SHOP = ["shopify"]
    Order.objects.filter(number="BK-10103").update(source="shopify", shop_order_id="450789469")
    # Shopify is slow to answer: the write is not attempted while the customer reads the reply.
    monkeypatch.setattr(order_services, "order_change_requested_send", lambda change: None)
    page = tab.page
    send_with_js(page, f"Please cancel my order BK-10103, my email is {SARAH}")
    assert send_with_js(page, "yes").startswith("I have asked the store to cancel order BK-10103.")

    order_change_shop_failed(change_id=OrderChange.objects.get().pk, answer="422: Cannot cancel it")
    expect(replies(page).last).to_have_text(
        "The store could not cancel order BK-10103. Would you like me to pass this to a member of our "
        "support team?",
        timeout=20_000,
    )
    assert tab.errors == []


def test_a_new_visitor_who_asks_for_a_person_before_the_first_answer_has_one_conversation(tab):
    # Someone arriving sends a message and, while the assistant is still on it (held here, as a real
    # model takes seconds), presses "Talk to a person".
    page = tab.page
    held = _hold_chat_posts(page)
    page.get_by_label("Your message").fill("My parcel never came")
    page.get_by_role("button", name="Send", exact=True).click()
    page.get_by_role("button", name="Talk to a person").click()
    page.wait_for_timeout(1000)  # time enough for a request not held back to reach the site
    held[0].continue_()
    expect(page.locator("#handoff-notice")).to_be_visible()
    expect(replies(page)).to_have_count(1)
    conversation = Conversation.objects.get()  # one session, one conversation
    assert conversation.status == "waiting"
    assert conversation.messages.filter(visible_text="My parcel never came").exists()
    assert tab.errors == []


def test_without_javascript_a_person_answers_and_a_reload_shows_it(open_tab, staff_user):
    tab = open_tab(javascript=False)
    page = tab.page
    page.goto("/")
    with page.expect_navigation():
        page.get_by_role("button", name="Talk to a person").click()
    expect(page.locator("#handoff-notice")).to_contain_text("Our team is not in the chat right now")
    page.get_by_label("Your email address").fill("reader@example")  # the browser lets it through
    with page.expect_navigation():
        page.get_by_role("button", name="Save my email address").click()
    expect(page.get_by_role("alert")).to_contain_text("doesn't look like an email address")
    page.get_by_label("Your message").fill("My parcel arrived soaked")
    with page.expect_navigation():
        page.get_by_role("button", name="Send", exact=True).click()
    expect(customer_messages(page)).to_have_text(["My parcel arrived soaked"])
    expect(replies(page)).to_have_count(0)
    expect(page.get_by_text("Reload this page to see new replies from our team.")).to_be_visible()

    staff = staff_login(open_tab, "/admin/support/conversation/")
    staff.page.get_by_role("link", name=re.compile(r"Conversation \d+")).click()
    staff.page.get_by_label(re.compile("Reply to the customer")).fill("A new copy is on its way.")
    staff.page.get_by_role("button", name="Send reply").click()
    expect(staff.page.get_by_role("status").filter(has_text="Your reply was sent.")).to_be_visible()

    page.reload()
    expect(page.locator(".message--staff .message__text")).to_have_text(["A new copy is on its way."])
    assert tab.errors == [] and staff.errors == []


def test_whole_conversation_without_javascript(open_tab):
    tab = open_tab(javascript=False)
    page = tab.page
    page.goto("/")

    with page.expect_navigation():
        page.get_by_role("button", name="How long does shipping take?").click()
    assert PolicyEntry.objects.get(topic="shipping").text in replies(page).last.inner_text()

    status = send_without_js(page, "What's the status of BK-10089? My email is james.murphy@example.com")
    assert "shipped" in status

    send_without_js(page, f"I want to return a book from BK-10042 because it arrived damaged. {SARAH}")
    started = send_without_js(page, "yes")
    assert re.search(r"RMA-[A-Z0-9]+", started)
    assert send_without_js(page, "Tell me a joke") == REFUSAL_TEMPLATE.format(topic="jokes")

    # An error is said in words and the unsent text stays in the box.
    long_text = "x" * 4001
    page.get_by_label("Your message").fill(long_text)
    with page.expect_navigation():
        page.get_by_role("button", name="Send", exact=True).click()
    expect(page.get_by_role("alert")).to_contain_text("at most 4000 characters")
    expect(page.get_by_label("Your message")).to_have_value(long_text)

    # Markup typed by the customer comes back as text.
    send_without_js(page, XSS)
    expect(customer_messages(page).last).to_have_text(XSS)
    assert page.locator("#transcript img").count() == 0

    page.reload()
    expect(customer_messages(page)).to_have_count(6)
    with page.expect_navigation():
        page.get_by_role("button", name="Start a new conversation").click()
    expect(page.get_by_text("You started a new conversation.")).to_be_visible()
    expect(page.locator("#transcript .message")).to_have_count(0)
    assert tab.errors == []


def test_reload_keeps_the_transcript_and_a_new_conversation_clears_it(tab):
    page = tab.page
    send_with_js(page, "Hello!")
    page.reload()
    expect(customer_messages(page)).to_have_text(["Hello!"])
    expect(replies(page)).to_have_count(1)

    page.get_by_role("button", name="Start a new conversation").click()
    expect(page.locator("#transcript .message")).to_have_count(0)
    expect(page.get_by_label("Your message")).to_be_focused()
    page.reload()
    expect(page.locator("#transcript .message")).to_have_count(0)
    assert tab.errors == []


def test_keyboard_enter_sends_shift_enter_adds_a_line_and_focus_stays(tab):
    page = tab.page
    box = page.get_by_label("Your message")
    box.click()
    page.keyboard.type("Hello there")
    page.keyboard.press("Shift+Enter")
    page.keyboard.type("How do returns work?")
    expect(customer_messages(page)).to_have_count(0)
    page.keyboard.press("Enter")

    expect(replies(page)).to_have_count(1)
    assert customer_messages(page).last.inner_text() == "Hello there\nHow do returns work?"
    expect(box).to_have_value("")
    expect(box).to_be_focused()
    # Send and the suggestions are reachable by keyboard.
    page.keyboard.press("Tab")
    expect(page.get_by_role("button", name="Send", exact=True)).to_be_focused()
    assert tab.errors == []


def test_a_customer_message_with_markup_is_shown_as_text(tab):
    page = tab.page
    send_with_js(page, XSS)
    expect(customer_messages(page).last).to_have_text(XSS)
    page.reload()
    expect(customer_messages(page).last).to_have_text(XSS)
    assert page.locator("#transcript img").count() == 0
    assert tab.dialogs == []
    assert tab.errors == []


def _hold_chat_posts(page: Page) -> list:
    """Intercept POSTs to the chat API and keep them waiting; the test answers them."""
    held = []
    page.route(
        "**/api/chat",
        lambda route: held.append(route) if route.request.method == "POST" else route.continue_(),
    )
    return held


def _error_body(code: str, detail: str) -> str:
    return json.dumps({"error": code, "detail": detail, "offline": True})


def test_rate_limited_shows_the_message_inline_and_retry_sends_the_same_text(tab):
    page = tab.page
    held = _hold_chat_posts(page)
    box = page.get_by_label("Your message")
    box.fill("Where is my order?")
    box.press("Enter")

    typing = page.locator("#typing")
    expect(typing).to_have_text(re.compile("typing"))
    expect(customer_messages(page)).to_have_text(["Where is my order?"])
    expect(page.get_by_role("button", name="Send", exact=True)).to_be_disabled()
    box.press("Enter")  # no double submit while a turn runs
    assert len(held) == 1

    detail = "You're sending messages faster than I can answer them. Please wait 12 seconds."
    held[0].fulfill(
        status=429,
        headers={"Retry-After": "12"},
        content_type="application/json",
        body=_error_body("rate_limited", detail),
    )
    expect(typing).to_have_text("")
    expect(page.locator("#chat-error")).to_contain_text(detail)
    expect(customer_messages(page)).to_have_count(0)  # refused, so not stored either
    expect(box).to_be_focused()
    screenshot(page, "chat-rate-limited")

    page.unroute("**/api/chat")
    page.get_by_role("button", name="Retry").click()
    expect(replies(page)).to_have_count(1)
    expect(customer_messages(page)).to_have_text(["Where is my order?"])
    expect(page.locator("#chat-error")).to_be_empty()
    assert [error for error in tab.errors if "status of 429" not in error] == []


def test_model_unavailable_shows_the_message_inline_and_clears_the_typing_indicator(tab):
    page = tab.page
    held = _hold_chat_posts(page)
    send_button = page.get_by_role("button", name="Send", exact=True)
    page.get_by_label("Your message").fill("How do returns work?")
    send_button.click()
    expect(page.locator("#typing")).to_have_text(re.compile("typing"))

    detail = "The assistant is very busy right now. Your message is saved; please try again in a moment."
    held[0].fulfill(
        status=503,
        headers={"Retry-After": "5"},
        content_type="application/json",
        body=_error_body("model_unavailable", detail),
    )
    expect(page.locator("#typing")).to_have_text("")
    expect(page.locator("#chat-error")).to_contain_text(detail)
    expect(page.get_by_role("button", name="Retry")).to_be_visible()
    expect(send_button).to_be_enabled()

    # A lost connection is said in words too.
    page.get_by_role("button", name="Retry").click()
    expect(page.locator("#typing")).to_have_text(re.compile("typing"))
    held[1].abort("internetdisconnected")
    expect(page.locator("#chat-error")).to_contain_text("couldn't reach Bookly")
    expect(page.locator("#typing")).to_have_text("")
    unexpected = [e for e in tab.errors if "status of 503" not in e and "ERR_INTERNET_DISCONNECTED" not in e]
    assert unexpected == []


def test_a_message_the_model_refuses_stays_shown_and_comes_back_to_be_reworded(tab):
    page = tab.page
    held = _hold_chat_posts(page)
    page.get_by_label("Your message").fill("A message the model cannot take")
    page.get_by_role("button", name="Send", exact=True).click()
    detail = "I couldn't process that message, so I've set it aside. Could you put it another way?"
    held[0].fulfill(
        status=422, content_type="application/json", body=_error_body("message_not_processed", detail)
    )
    expect(page.locator("#chat-error")).to_contain_text(detail)
    # No Retry: the same words would be set aside again. They stay shown and come back to edit.
    expect(page.get_by_role("button", name="Retry")).to_have_count(0)
    expect(customer_messages(page)).to_have_text(["A message the model cannot take"])
    expect(page.get_by_label("Your message")).to_have_value("A message the model cannot take")
    assert [error for error in tab.errors if "status of 422" not in error] == []


def test_staff_edit_of_the_shipping_faq_is_quoted_in_the_next_answer(open_tab, staff_user):
    new_text = "Standard shipping is now free on every order and takes 2 to 4 business days."
    staff = staff_login(open_tab, "/admin/policies/policyentry/")
    admin = staff.page
    admin.get_by_role("link", name="shipping").click()
    admin.get_by_label("Text").fill(new_text)
    with admin.expect_navigation():
        admin.get_by_role("button", name="Save", exact=True).click()
    expect(admin.get_by_text("was changed successfully")).to_be_visible()
    assert staff.errors == []

    customer = open_tab()
    customer.page.goto("/")
    reply = send_with_js(customer.page, "How long does shipping take?")
    assert new_text in reply
    assert customer.errors == []


# Every line the status line shows, however briefly (the offline model answers at once).
RECORD_STATUS_LINES = """
window.statusLines = [];
document.addEventListener("DOMContentLoaded", () => {
  new MutationObserver((records) => {
    for (const record of records) {
      for (const node of record.addedNodes) {
        if (node.nodeType === Node.TEXT_NODE && node.data) window.statusLines.push(node.data);
      }
    }
  }).observe(document.getElementById("typing"), { childList: true });
});
"""


def test_the_status_line_says_each_step_of_a_return_as_it_happens(open_tab):
    tab = open_tab()
    tab.context.add_init_script(RECORD_STATUS_LINES)
    page = tab.page
    page.goto("/")
    send_with_js(page, f"I want to return BK-10042 because it arrived damaged. {SARAH}")
    started = send_with_js(page, "Yes please")

    assert re.search(r"RMA-[A-Z0-9]+", started)
    assert page.evaluate("window.statusLines") == [
        "Bookly assistant is typing…",
        "Checking whether order BK-10042 can be returned…",
        "Writing the answer…",
        "Bookly assistant is typing…",
        "Starting your return for order BK-10042…",
        "Writing the answer…",
    ]
    expect(page.locator("#typing")).to_have_text("")
    assert tab.errors == []


def test_a_faq_topic_staff_add_is_answered_on_the_next_message(open_tab, staff_user):
    customer = open_tab()
    customer.page.goto("/")
    assert send_with_js(customer.page, "Do you offer gift wrapping?") == NO_POLICY_REPLY

    wrapping = "We gift-wrap any book for $3.50, with a handwritten card. Choose gift wrapping at checkout."
    staff = staff_login(open_tab, "/admin/policies/policyentry/add/")
    admin = staff.page
    admin.get_by_label("Topic").fill("gift_wrapping")
    admin.get_by_label("Title").fill("Gift wrapping")
    admin.get_by_label("Text").fill(wrapping)
    admin.get_by_label("Example questions").fill(
        "Do you offer gift wrapping?\nCan you wrap a book as a present?"
    )
    with admin.expect_navigation():
        admin.get_by_role("button", name="Save", exact=True).click()
    expect(admin.get_by_text("was added successfully")).to_be_visible()
    assert staff.errors == []

    # No restart: the same customer's next message, in other words.
    assert wrapping in send_with_js(customer.page, "could you wrap my books as a present?")
    screenshot(customer.page, "chat-new-faq-topic")
    assert customer.errors == []


def test_staff_add_an_unanswered_question_to_a_faq_topic_and_the_next_message_is_answered(
    open_tab, staff_user
):
    wrapping = "We gift-wrap any book for $3.50, with a handwritten card. Choose gift wrapping at checkout."
    PolicyEntry.objects.create(topic="extras", title="Extras", text=wrapping, example_questions="Any extras?")
    note = "Could you add a little note from me?"  # words the topic's text does not use
    customer = open_tab()
    customer.page.goto("/")
    assert wrapping not in send_with_js(customer.page, note)

    staff = staff_login(open_tab, "/admin/")
    admin = staff.page
    admin.get_by_role("link", name=re.compile("Questions the assistant did not answer")).click()
    group = admin.get_by_role("region", name=re.compile("Could you add a little note"))
    expect(group).to_contain_text("1 question, the newest")
    expect(group.get_by_role("link", name="Create a FAQ topic from these questions")).to_be_visible()
    group.get_by_label("Add these questions to").select_option(label="Extras")
    question = group.get_by_role("checkbox", name=note)
    expect(question).not_to_be_checked()  # a customer's words become the store's only when ticked
    question.check()
    with admin.expect_navigation():
        group.get_by_role("button", name="Add to this topic").click()
    expect(admin.get_by_text("Added 1 question to “Extras”.")).to_be_visible()
    expect(group).to_contain_text("Some of these are already example questions of Extras.")
    screenshot(admin, "admin-unanswered")
    assert staff.errors == []

    # No restart: the customer's next message is answered from the topic.
    assert wrapping in send_with_js(customer.page, note)
    assert customer.errors == []


def test_a_customer_votes_on_a_reply_and_rates_the_conversation_and_staff_see_it(tab, open_tab, staff_user):
    page = tab.page
    expect(page.locator("#rating")).to_be_hidden()  # nothing to rate yet
    send_with_js(page, "How long does shipping take?")
    send_with_js(page, "Can I pay with a gift card?")

    first = page.locator(".message--assistant").first
    first.get_by_role("button", name="No").click()
    expect(first.get_by_role("status")).to_have_text("Thanks for your feedback.")
    expect(first.get_by_role("button", name="No")).to_have_attribute("aria-pressed", "true")
    expect(first.get_by_role("button", name="Yes")).to_have_attribute("aria-pressed", "false")

    page.get_by_text("Rate this conversation").click()
    page.get_by_label("2", exact=True).check()
    page.get_by_label("Anything you would like to add? (optional)").fill("The answer missed my question")
    page.get_by_role("button", name="Send my rating").click()
    expect(page.locator("#rating-thanks")).to_have_text("You rated this conversation 2 out of 5. Thank you.")
    page.reload()  # kept by the server
    expect(page.locator(".message--assistant").first.get_by_role("button", name="No")).to_have_attribute(
        "aria-pressed", "true"
    )
    screenshot(page, "chat-feedback")
    # A new conversation starts unrated, and the old page's votes cannot reach it.
    page.get_by_role("button", name="Start a new conversation").click()
    expect(page.locator("#rating")).to_be_hidden()
    send_with_js(page, "How do returns work?")
    page.get_by_text("Rate this conversation").click()
    expect(page.get_by_label("2", exact=True)).not_to_be_checked()
    expect(page.get_by_label("Anything you would like to add? (optional)")).to_have_value("")
    assert tab.errors == []

    staff = staff_login(open_tab, "/admin/")
    staff.page.get_by_role("link", name=re.compile("1 reply customers found unhelpful")).click()
    expect(staff.page.get_by_text("How long does shipping take?")).to_be_visible()
    staff.page.get_by_role("link", name=re.compile("Turn 1")).click()
    expect(staff.page.locator("#trace-1")).to_contain_text("Customer: not helpful")
    expect(staff.page.locator("#trace-1 > details")).to_have_attribute("open", "")  # the link opens it
    expect(staff.page.locator("#trace-1")).to_contain_text("Looked up the FAQ on \u201cshipping\u201d")
    expect(staff.page.get_by_text("The answer missed my question")).to_be_visible()
    screenshot(staff.page, "admin-feedback")
    assert staff.errors == []


def test_a_support_lead_opens_the_dashboard_and_reads_its_charts(tab, open_tab, staff_user):
    send_with_js(tab.page, "How long does shipping take?")
    send_with_js(tab.page, "What's the weather like in Boston?")

    staff = staff_login(open_tab, "/admin/")
    page = staff.page
    page.get_by_role("link", name="Dashboard: how the assistant is doing").click()
    expect(
        page.get_by_role("img", name="Fallbacks, refusals and failed turns (share of turns)")
    ).to_be_visible()
    expect(page.locator("#dashboard-figures")).to_contain_text("Refused (out of scope)50.0% of turns")
    refusals = page.locator("#chart-failures")
    refusals.get_by_text("Table", exact=True).click()  # the numbers, for a screen reader or a closer look
    expect(refusals.get_by_role("table")).to_contain_text("50.0%")
    expect(page.locator("#dashboard-unanswered")).to_contain_text("What's the weather like in Boston?")
    with page.expect_download() as download:
        page.get_by_role("link", name="Download the period as CSV").click()
    assert download.value.suggested_filename.startswith("bookly-dashboard-")
    screenshot(page, "admin-dashboard")
    page.set_viewport_size(PHONE)
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"] + 1
    screenshot(page, "admin-dashboard-360")
    assert staff.errors == []


LONG_CONVERSATION = [
    "How long does shipping take?",
    "Where is my order?",
    "BK-10042",
    SARAH,
    "How do returns work?",
    "What about my password?",
    "Thanks!",
]


def _box(locator: Locator) -> FloatRect:
    """The element's box on the page: it is shown (an element that is not has none)."""
    box = locator.bounding_box()
    assert box is not None, locator
    return box


def _composer_on_screen_and_latest_visible(page: Page, viewport: ViewportSize) -> None:
    box = _box(page.locator("#composer"))
    assert box["y"] >= 0 and box["y"] + box["height"] <= viewport["height"], box
    latest = _box(page.locator(".message").last)
    scroller = _box(page.locator("#chat-scroller"))
    # The newest message ends inside the conversation's visible part.
    assert scroller["y"] <= latest["y"] + latest["height"] <= scroller["y"] + scroller["height"] + 1


@pytest.mark.parametrize(
    ("viewport", "javascript"),
    [(LAPTOP, True), (PHONE_SMALL, True), (PHONE_SMALL, False)],
    ids=["1280x800", "360x740", "360x740-no-js"],
)
def test_the_message_box_stays_on_screen_through_a_long_conversation(
    open_tab, settings, viewport, javascript
):
    settings.TIME_ZONE = "America/New_York"
    tab = open_tab(javascript=javascript, viewport=viewport)
    page = tab.page
    page.goto("/")
    assert page.locator("#welcome").get_attribute("open") is not None  # nothing said yet: the introduction
    for message in LONG_CONVERSATION * 2:
        (send_with_js if javascript else send_without_js)(page, message)
        _composer_on_screen_and_latest_visible(page, viewport)
    assert (
        page.evaluate("document.documentElement.scrollHeight") <= viewport["height"]
    )  # only the chat scrolls

    screenshot(page, f"chat-long-{viewport['width']}{'' if javascript else '-no-js'}")

    # The introduction folded away once the conversation started, and opens again.
    assert page.locator("#welcome").get_attribute("open") is None
    page.get_by_text("What the assistant can help with").click()
    expect(page.get_by_role("button", name="How do returns work?")).to_be_visible()

    # Times are the store's; dates and codes never break at their hyphen.
    stamp = page.locator(".message--assistant .message__time").last
    expected = timezone.localtime(datetime.fromisoformat(stamp.get_attribute("datetime"))).strftime("%H:%M")
    expect(stamp).to_have_text(expected)
    dates = page.locator(".message--assistant .nobreak")
    assert dates.count() >= 3
    for index in range(dates.count()):
        assert len(dates.nth(index).evaluate("node => [...node.getClientRects()]")) == 1
    assert tab.errors == []


def _on_screen_below_the_header(page: Page, selector: str) -> None:
    box = _box(page.locator(selector))
    header = page.locator(".site-header").bounding_box()  # None in the widget's frame: no header there
    top = header["y"] + header["height"] if header else 0
    composer = _box(page.locator("#composer"))
    assert top <= box["y"] and box["y"] + box["height"] <= composer["y"], (selector, box)


WIDGET_PANEL: ViewportSize = {"width": 380, "height": 640}


@pytest.mark.parametrize(
    ("viewport", "path"),
    [(LAPTOP, "/"), (PHONE_SMALL, "/"), (WIDGET_PANEL, "/?embed=1")],
    ids=["1280x800", "360x740", "widget-frame"],
)
def test_the_first_view_shows_the_introduction_and_a_reload_the_latest_message(open_tab, viewport, path):
    page = open_tab(viewport=viewport).page
    page.goto(path)
    # A new conversation opens on its heading, the notice and the start of the introduction.
    for selector in ("#welcome-title", "#offline-notice", "#welcome summary"):
        _on_screen_below_the_header(page, selector)

    send_with_js(page, "How long does shipping take?")
    send_with_js(page, "What about returns?")
    page.reload()
    # One under way opens on its newest message; the notice stays where it is read.
    _composer_on_screen_and_latest_visible(page, viewport)
    _on_screen_below_the_header(page, "#offline-notice")
    screenshot(page, f"chat-reloaded-{viewport['width']}")


@pytest.mark.parametrize("viewport", [LAPTOP, PHONE_SMALL], ids=["1280x800", "360x740"])
def test_after_asking_for_a_person_what_happens_next_is_on_screen(open_tab, viewport):
    page = open_tab(viewport=viewport).page
    page.goto("/")
    send_with_js(page, "Where is my order?")
    page.get_by_role("button", name="Talk to a person").first.click()
    expect(page.locator("#handoff-notice")).to_be_visible()
    scroller = page.locator("#chat-scroller").bounding_box()
    bottom = scroller["y"] + scroller["height"] + 1
    notice = page.locator("#handoff-notice").bounding_box()
    field = page.locator("#handoff-email-input").bounding_box()
    assert scroller["y"] <= notice["y"] and field["y"] + field["height"] <= bottom, (scroller, notice, field)
    if viewport == LAPTOP:  # where it fits, a new conversation is on screen too
        button = page.get_by_role("button", name="Start a new conversation").bounding_box()
        assert button["y"] + button["height"] <= bottom, (scroller, button)
    screenshot(page, f"chat-handoff-{viewport['width']}")


def test_the_page_fits_a_360_pixel_phone(open_tab):
    tab = open_tab(viewport=PHONE, is_mobile=True, has_touch=True, device_scale_factor=2)
    page = tab.page
    page.goto("/")
    send_with_js(page, "How long does shipping take?")
    send_with_js(page, f"Where is BK-10042? {SARAH}")
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    expect(page.get_by_role("button", name="Send", exact=True)).to_be_visible()
    screenshot(page, "chat-phone-360")
    assert tab.errors == []


def test_admin_pages_run_without_csp_violations(open_tab, staff_user):
    staff = staff_login(open_tab, "/admin/")
    page = staff.page
    for path in (
        "/admin/",
        "/admin/orders/order/",
        "/admin/orders/order/?q=BK-10042",
        "/admin/policies/policyentry/add/",
        "/admin/orders/returnrecord/",
        "/admin/support/conversation/",
        "/admin/support/turntrace/?helpful__exact=0",
        "/admin/support/conversation/dashboard/",
        "/admin/support/turntrace/unanswered/?days=90",
        "/admin/support/savedreply/",
        "/admin/support/savedreply/add/",
    ):
        page.goto(path)
        expect(page.locator("#content")).to_be_visible()
    page.goto("/admin/orders/order/")
    page.get_by_role("link", name="BK-10042").click()  # a change form with inlines
    expect(page.get_by_text("The Goldfinch", exact=True)).to_be_visible()
    assert staff.errors == []


# --- the widget on a store's own page ----------------------------------------------------------------


class StorePage:
    """A store's page on another site than the chat (127.0.0.1 against the live server's localhost),
    served with a strict CSP of its own, with the widget's script tag."""

    def __init__(self):
        self.html = ""
        # The store's own address for a fresh signature of its signed-in customer (data-customer-
        # signature-url): what it answers (None: nobody is signed in), and how often it was asked.
        self.fresh_signature = None
        self.signatures_given = 0
        store = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                if self.path == "/bookly-signature":
                    customer = store.fresh_signature() if store.fresh_signature else None
                    store.signatures_given += customer is not None
                    body = json.dumps(customer or {"error": "not signed in"}).encode()
                    self.send_response(200 if customer else 401)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                    return
                if self.path == "/widget.js":  # a copy on the store's own server: see the test that uses it
                    body = WIDGET_SCRIPT.read_bytes()
                    self.send_response(200)
                    self.send_header("Content-Type", "text/javascript")
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                    return
                body = store.html.encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Security-Policy", store.csp)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.origin = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.csp = "default-src 'self'"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def with_widget(self, chat: str, *, times: int = 1, **data: str) -> None:
        attributes = " ".join(f'data-{name.replace("_", "-")}="{value}"' for name, value in data.items())
        tag = f'<script src="{chat}/widget.js" async {attributes}></script>'
        # The store's own policy: nothing inline, scripts and frames only from itself and the chat.
        self.csp = f"default-src 'self'; script-src 'self' {chat}; frame-src {chat}; style-src 'self'"
        self.html = f"<!doctype html><title>A bookshop</title><h1>Our books</h1>{tag * times}"


@pytest.fixture
def store_page():
    page = StorePage()
    yield page
    page.server.shutdown()


def _chat_frame(page: Page):
    return page.frame_locator("[data-bookly-widget] >> iframe")


def test_a_customer_chats_on_the_store_s_own_page_and_finds_the_conversation_after_a_reload(
    open_tab, site, settings, store_page
):
    settings.BOOKLY_WIDGET_ORIGINS = [store_page.origin]
    # A page that loads the script twice gets one launcher (and one greeting).
    store_page.with_widget(site, times=2, greeting="Questions about an order? Ask us here.")
    tab = open_tab()
    page = tab.page
    page.goto(store_page.origin)
    launcher = page.get_by_role("button", name="Chat with us")
    expect(launcher).to_have_count(1)
    expect(launcher).to_have_attribute("aria-expanded", "false")
    greeting = page.get_by_role("button", name="Questions about an order? Ask us here.")
    expect(greeting).to_have_count(1)
    screenshot(page, "widget-launcher")

    greeting.click()  # the greeting opens the chat too, and is not shown again on this visit
    expect(page.get_by_role("button", name="Close chat")).to_have_attribute("aria-expanded", "true")
    chat = _chat_frame(page)
    chat.get_by_label("Your message").fill("How long does shipping take?")
    chat.get_by_role("button", name="Send").click()
    expect(chat.locator(".message--assistant .message__text").last).to_contain_text("shipping")
    screenshot(page, "widget-open")

    page.keyboard.press("Escape")  # pressed inside the chat: the widget closes and the launcher has focus
    expect(launcher).to_have_attribute("aria-expanded", "false")
    expect(launcher).to_be_focused()

    page.reload()
    page.get_by_role("button", name="Chat with us").click()
    expect(greeting).to_have_count(0)
    expect(_chat_frame(page).locator(".message--customer").first).to_contain_text(
        "How long does shipping take?"
    )
    assert tab.errors == []


def _signed(settings, email: str, timestamp: int) -> dict:
    secret = settings.BOOKLY_CUSTOMER_SIGNING_SECRET
    return {
        "email": email,
        "time": str(timestamp),
        "signature": customer_signature(secret=secret, email=email, timestamp=timestamp),
    }


def _ask(page: Page, words: str):
    chat = _chat_frame(page)
    chat.get_by_label("Your message").fill(words)
    chat.get_by_role("button", name="Send").click()
    return chat.locator(".message--assistant .message__text").last


def test_a_signed_in_customer_is_shown_their_orders_without_typing_an_email(
    open_tab, site, settings, store_page
):
    settings.BOOKLY_WIDGET_ORIGINS = [store_page.origin]
    settings.BOOKLY_CUSTOMER_SIGNING_SECRET = "a-store-secret-of-thirty-two-characters-or-more"
    sarah = _signed(settings, "sarah.chen@example.com", int(time.time()))
    store_page.with_widget(
        site,
        customer_email=sarah["email"],
        customer_time=sarah["time"],
        customer_signature=sarah["signature"],
    )
    page = open_tab(viewport=PHONE_SMALL).page
    page.goto(store_page.origin)
    page.get_by_role("button", name="Chat with us").click()
    # Asked at once: the first message waits for the store's word on who the customer is.
    expect(_ask(page, "Where is my order?")).to_contain_text("BK-10042")
    screenshot(page, "widget-phone-signed-in")

    # The customer signs out of the store (or someone else uses the computer): the next page has no
    # signature, and the chat no longer knows them.
    store_page.with_widget(site)
    page.reload()
    page.get_by_role("button", name="Chat with us").click()
    # The frame was drawn with Sarah's conversation before the store's page said nobody is signed in:
    # it is gone, and the next person's words start a new one.
    expect(_chat_frame(page).locator(".message")).to_have_count(0)
    expect(_ask(page, "Where is my order?")).to_contain_text("What is the order number?")

    # A single-page shop signs its customer in after the page loaded, and the customer writes at once:
    # the message waits for the chat to take the sign-in (held here until the message was sent).
    held = []
    page.route("**/api/chat/sign-in", lambda route: held.append(route))
    page.evaluate(
        "customer => window.BooklyWidget.signIn(customer)",
        _signed(settings, sarah["email"], int(time.time()) + 1),
    )
    sent_early = []
    page.on(
        "request",
        lambda request: sent_early.append(request.url) if request.url.endswith("/api/chat") else None,
    )
    answer = _ask(page, "I don't have my order number")
    page.wait_for_timeout(500)  # long enough for a message that does not wait to be sent
    assert len(held) == 1 and sent_early == []
    held[0].continue_()
    expect(answer).to_contain_text("BK-10042")


# What a store's page may do to hear that the chat did not take the customer it named.
LISTEN_FOR_SIGN_INS_ENDED = """() => {
  window.signInsEnded = [];
  window.addEventListener("bookly:sign-in-ended", (event) => window.signInsEnded.push(event.detail));
}"""


def test_a_tab_left_open_longer_than_a_signature_lasts_renews_it_and_the_page_hears_when_one_ends(
    open_tab, site, settings, store_page
):
    settings.BOOKLY_WIDGET_ORIGINS = [store_page.origin]
    settings.BOOKLY_CUSTOMER_SIGNING_SECRET = "a-store-secret-of-thirty-two-characters-or-more"
    email = "sarah.chen@example.com"
    # The page was drawn eleven minutes ago: the signature in it is too old for the chat now.
    drawn = _signed(settings, email, int(time.time()) - 660)
    store_page.fresh_signature = lambda: _signed(settings, email, int(time.time()))
    store_page.with_widget(
        site,
        customer_email=email,
        customer_time=drawn["time"],
        customer_signature=drawn["signature"],
        customer_signature_url="/bookly-signature",
    )
    page = open_tab().page
    page.clock.install()  # the tab's own clock, moved on below as for a tab left open
    page.goto(store_page.origin)
    page.evaluate(LISTEN_FOR_SIGN_INS_ENDED)
    page.clock.fast_forward("11:00")
    page.get_by_role("button", name="Chat with us").click()

    expect(_ask(page, "What are my recent orders?")).to_contain_text("BK-10042")
    assert store_page.signatures_given == 1
    assert page.evaluate("window.signInsEnded") == []

    # Without the store's address, an old signature is not taken, and the store's page is told.
    store_page.with_widget(
        site, customer_email=email, customer_time=drawn["time"], customer_signature=drawn["signature"]
    )
    page.reload()
    page.evaluate(LISTEN_FOR_SIGN_INS_ENDED)
    page.get_by_role("button", name="Chat with us").click()
    for _ in range(50):  # the store's CSP forbids wait_for_function's evaluated strings
        if page.evaluate("() => window.signInsEnded.length"):
            break
        page.wait_for_timeout(100)
    assert page.evaluate("window.signInsEnded") == [{"conversationEnded": True}]
    expect(_ask(page, "What are my recent orders?")).not_to_contain_text("BK-10042")


def test_a_page_on_an_origin_not_listed_cannot_show_the_chat(open_tab, site, settings, store_page):
    settings.BOOKLY_WIDGET_ORIGINS = ["https://shop.example.com"]
    store_page.with_widget(site)
    page = open_tab().page
    page.goto(store_page.origin)
    page.get_by_role("button", name="Chat with us").click()
    page.wait_for_timeout(1500)
    frame = next(frame for frame in page.frames if frame is not page.main_frame)
    assert frame.url.startswith("chrome-error://") or "Chat with Bookly" not in frame.content()


def test_our_team_s_reply_to_a_closed_widget_shows_on_its_launcher(
    open_tab, site, settings, store_page, staff_user
):
    settings.BOOKLY_WIDGET_ORIGINS = [store_page.origin]
    store_page.with_widget(site, color="#8a0b4f", label="Questions?", greeting="Hello!")
    page = open_tab().page
    page.goto(store_page.origin)
    launcher = page.get_by_role("button", name="Questions?")
    page.get_by_role("button", name="Dismiss").click()
    expect(page.get_by_role("button", name="Hello!")).to_have_count(0)
    expect(launcher).to_be_focused()
    assert launcher.evaluate("button => getComputedStyle(button).backgroundColor") == "rgb(138, 11, 79)"
    launcher.click()
    chat = _chat_frame(page)
    chat.get_by_label("Your message").fill("My parcel arrived soaked")
    chat.get_by_role("button", name="Send").click()
    # Answered first, as a customer reads the answer: a new visitor's first two requests at once would
    # each start a session of their own.
    expect(chat.locator(".message--assistant")).to_have_count(1)
    chat.get_by_role("button", name="Talk to a person").click()
    expect(chat.locator("#handoff-notice")).to_be_visible()
    page.get_by_role("button", name="Close chat").click()

    conversation_staff_reply(
        conversation=Conversation.objects.get(), user=staff_user, text="So sorry! A new copy is on its way."
    )
    launcher = page.get_by_role("button", name="Questions?, new message")
    expect(launcher).to_be_visible(timeout=20_000)  # the chat polls for our team's replies
    screenshot(page, "widget-unread")
    launcher.click()
    expect(chat.locator(".message--staff")).to_contain_text("A new copy is on its way.")
    expect(page.get_by_role("button", name="Close chat")).to_be_visible()  # opened: the badge is gone


@pytest.mark.slow  # waits out the widget's ten seconds
def test_a_chat_that_does_not_answer_is_said_so_instead_of_an_empty_panel(open_tab, store_page):
    # The script is there, but where it expects the chat, nothing that answers as the chat does (the
    # store's own server, here): as when the chat's server is down behind a cached script.
    store_page.with_widget(store_page.origin)
    page = open_tab().page
    page.goto(store_page.origin)
    page.get_by_role("button", name="Chat with us").click()
    expect(page.get_by_role("status")).to_have_text(
        "Our chat can't be reached right now. Please try again in a little while.", timeout=15_000
    )


def _third_party_cookies_blocked(page: Page) -> None:
    """As Chrome's third-party cookie restriction (and browsers that block them): a cookie set in
    another site's frame is kept only when it is Partitioned."""
    page.context.new_cdp_session(page).send(
        "Network.setCookieControls",
        {
            "enableThirdPartyCookieRestriction": True,
            "disableThirdPartyCookieMetadata": True,
            "disableThirdPartyCookieHeuristics": True,
        },
    )


def test_a_browser_that_blocks_third_party_cookies_keeps_the_widget_s_conversation(
    open_tab, site, settings, store_page
):
    settings.BOOKLY_WIDGET_ORIGINS = [store_page.origin]
    store_page.with_widget(site)
    page = open_tab().page
    _third_party_cookies_blocked(page)
    page.goto(store_page.origin)
    page.get_by_role("button", name="Chat with us").click()
    expect(_ask(page, "How long does shipping take?")).to_contain_text("shipping")
    page.reload()
    page.get_by_role("button", name="Chat with us").click()
    expect(_chat_frame(page).locator(".message--customer")).to_have_count(1)


def test_a_browser_that_drops_the_widget_s_cookies_is_offered_the_chat_in_a_tab(
    open_tab, site, settings, store_page
):
    # A browser without partitioned cookies that blocks third-party ones: the chat's cookies are set
    # but never come back. Every message would land in a new session; the frame says so instead.
    settings.BOOKLY_WIDGET_ORIGINS = [store_page.origin]
    store_page.with_widget(site)
    page = open_tab().page
    _third_party_cookies_blocked(page)

    def without_partitioned(route):
        response = route.fetch()
        headers = {name: value for name, value in response.headers.items() if name != "set-cookie"}
        # Playwright gives and takes several Set-Cookie headers as one, a line each.
        cookies = [
            header["value"] for header in response.headers_array if header["name"].lower() == "set-cookie"
        ]
        headers["set-cookie"] = "\n".join(cookie.replace("; Partitioned", "") for cookie in cookies)
        route.fulfill(response=response, headers=headers)

    page.route(f"{site}/?embed=1", without_partitioned)
    page.goto(store_page.origin)
    page.get_by_role("button", name="Chat with us").click()
    chat = _chat_frame(page)
    link = chat.get_by_role("link", name="Open the chat in a new tab")
    expect(link).to_be_visible()
    expect(chat.get_by_label("Your message")).to_be_hidden()
    with page.expect_popup() as popup:
        link.click()
    popup.value.get_by_label("Your message").fill("How long does shipping take?")
    popup.value.get_by_role("button", name="Send").click()
    expect(popup.value.locator(".message--assistant .message__text").last).to_contain_text("shipping")


# --- the support desk -----------------------------------------------------------------------------

# The notifications the page shows, recorded (headless Chromium shows none on a screen).
RECORD_NOTIFICATIONS = """
window.__notifications = [];
const RealNotification = window.Notification;
window.Notification = function (title, options) {
  window.__notifications.push({ title, body: options && options.body });
  return new RealNotification(title, options);
};
Object.defineProperty(window.Notification, "permission", { get: () => RealNotification.permission });
window.Notification.requestPermission = () => RealNotification.requestPermission();
"""


def test_a_customer_who_starts_waiting_appears_in_the_open_inbox_and_the_title_counts_them(
    open_tab, site, staff_user
):
    inbox = "/admin/support/conversation/?status__exact=waiting"
    staff = staff_login(
        open_tab, quote(inbox), init_script=RECORD_NOTIFICATIONS, permissions=["notifications"]
    )
    admin = staff.page
    assert admin.url.endswith(inbox)
    with admin.expect_navigation():
        admin.get_by_role("button", name="I'm available").click()
    admin.get_by_role("button", name="Notify me when a customer starts waiting").click()
    expect(admin.locator("#notify-status")).to_contain_text("On: a notification and a sound")
    admin.mouse.wheel(0, 200)
    assert not admin.title().startswith("(")

    # A customer who only chats is not in this filtered list; one who asks for a person appears.
    chatting = open_tab().page
    chatting.goto("/")
    send_with_js(chatting, "How long does shipping take?")
    waiting = open_tab().page
    waiting.goto("/")
    send_with_js(waiting, "My parcel never came")
    waiting.get_by_role("button", name="Talk to a person").click()
    expect(waiting.locator("#handoff-notice")).to_be_visible()
    conversation = Conversation.objects.get(status="waiting")

    row = admin.locator("#result_list tbody tr")
    expect(row).to_have_count(1, timeout=10_000)  # no reload
    expect(row).to_contain_text("My parcel never came")
    expect(row).to_contain_text("nobody yet")
    assert admin.url.endswith("?status__exact=waiting")
    expect(admin).to_have_title(re.compile(r"^\(1\) Inbox"))
    assert admin.evaluate("window.__notifications") == [
        {"title": "A customer is waiting for a person", "body": f"A visitor, conversation {conversation.pk}"}
    ]
    screenshot(admin, "admin-inbox-live")
    for width, height in ((1280, 800), (1920, 1080)):
        admin.set_viewport_size({"width": width, "height": height})
        screenshot(admin, f"admin-inbox-{width}")

    # Taken (by a colleague, say): it leaves the list of those waiting, and the title's count.
    conversation_assign(conversation=conversation, user=staff_user)
    expect(row).to_have_count(0, timeout=10_000)
    expect(admin).to_have_title(re.compile(r"^Inbox"))
    assert staff.errors == []


def test_a_browser_that_refuses_notifications_is_answered_with_what_to_do(open_tab, staff_user):
    # As a browser does once its user blocked the site's notifications.
    denied = """
    Object.defineProperty(Notification, "permission", { get: () => "denied" });
    Notification.requestPermission = () => Promise.resolve("denied");
    """
    staff = staff_login(open_tab, "/admin/support/conversation/", init_script=denied)
    admin = staff.page
    expect(admin.locator("#notify-status")).to_contain_text(
        "Your browser blocks notifications from this site"
    )
    admin.get_by_role("button", name="Notify me when a customer starts waiting").click()
    expect(admin.locator("#notify-status")).to_contain_text("Allow them in the site's settings")
    assert staff.errors == []


def test_staff_answer_with_a_saved_reply_add_a_note_and_give_it_to_a_colleague(
    open_tab, site, staff_user, django_user_model
):
    SavedReply.objects.create(
        title="Parcel lost",
        text="Hi {{first_name}}, so sorry about {{order_number}}: a new copy is on its way. {{agent_name}}",
    )
    bob = django_user_model.objects.create_user(
        username="bob", first_name="Bob", email="bob@bookly.example", password="bob-pass-1234", is_staff=True
    )
    bob.groups.add(staff_user.groups.get())
    customer = open_tab().page
    customer.goto("/")
    send_with_js(customer, "Where is BK-10042? I'm sarah.chen@example.com")
    customer.get_by_role("button", name="Talk to a person").click()
    expect(customer.locator("#handoff-notice")).to_be_visible()
    conversation = Conversation.objects.get()

    staff = staff_login(open_tab, f"/admin/support/conversation/{conversation.pk}/change/", viewport=LAPTOP)
    admin = staff.page
    box = admin.get_by_label(re.compile("Reply to the customer"))
    expect(box).to_be_in_viewport()  # the box is on screen as the page opens, under the latest messages
    box.press_sequentially("/parc")
    expect(admin.get_by_role("option", name=re.compile("Parcel lost"))).to_be_visible()
    box.press("Enter")
    expect(box).to_have_value("Hi Sarah, so sorry about BK-10042: a new copy is on its way. agent")
    scrolled = admin.evaluate("window.scrollY")
    admin.get_by_role("button", name="Send reply").click()
    expect(admin.get_by_text("Your reply was sent.")).to_be_visible()
    expect(box).to_have_value("")
    expect(box).to_be_focused()
    assert abs(admin.evaluate("window.scrollY") - scrolled) < 200  # no reload to the top
    expect(customer.locator(".message--staff .message__text")).to_have_text(
        ["Hi Sarah, so sorry about BK-10042: a new copy is on its way. agent"], timeout=20_000
    )

    box.fill("Courier confirms it is lost; refund if the copy is not there by Friday.")
    admin.get_by_role("button", name="Add as a note").click()
    expect(admin.locator("#transcript .support-entry--note")).to_contain_text("Courier confirms it is lost")
    screenshot(admin, "admin-conversation-1280")
    admin.set_viewport_size({"width": 1920, "height": 1080})
    screenshot(admin, "admin-conversation-1920")

    admin.get_by_label("Give it to").select_option(label="Bob · away")
    with admin.expect_navigation():
        admin.get_by_role("button", name="Assign").click()
    expect(admin.get_by_text("Bob has it now. They are away: they were emailed.")).to_be_visible()

    customer.reload()
    expect(customer.locator(".message--staff")).to_have_count(1)
    assert "Courier" not in customer.content()

    other = open_tab().page
    other.goto("/admin/login/?next=/admin/support/conversation/%3Fassigned%3Dme")
    other.get_by_label("Username").fill("bob")
    other.get_by_label("Password").fill("bob-pass-1234")
    with other.expect_navigation():
        other.get_by_role("button", name="Log in").click()
    expect(other.locator("#result_list tbody tr")).to_contain_text("Bob")
    expect(other.locator("#inbox-mine-count")).to_have_text("1")
    assert staff.errors == []
