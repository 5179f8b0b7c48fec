"""Support staff in admin, logged in through the real login form: the inbox, a conversation's page and its
actions, the links to orders and returns, and who may do what."""

from datetime import timedelta

import pytest
from django.contrib.auth.models import Permission
from django.utils import timezone

from orders.models import Order, ReturnRecord
from support.conversations.handoff import conversation_assign
from support.models import (
    Conversation,
    ConversationMessage,
    ConversationStatus,
    MessageRole,
    StaffAvailability,
)
from support.testing.chat_client import ChatClient
from support.testing.messages_stub import message, text, tool_use

pytestmark = pytest.mark.usefixtures("demo_data")

INBOX = "/admin/support/conversation/"


def _page(conversation: Conversation) -> str:
    return f"{INBOX}{conversation.pk}/change/"


def _inbox_row(html: str, conversation: Conversation) -> str:
    start = html.index(f'href="{_page(conversation)}')
    return html[html.rindex("<tr", 0, start) : html.index("</tr>", start)]


@pytest.fixture
def looked_up(claude):
    """A conversation where the assistant looked up an order and its reply was replaced by the fallback."""
    claude.reset(
        message(
            tool_use("lookup_order", {"order_id": "BK-10042", "customer_email": "sarah.chen@example.com"})
        ),
        # An invented order number: the validator replaces the reply.
        message(text("Your order BK-77777 has shipped.")),
    )
    chat = ChatClient()
    chat.send("Where is BK-10042? I'm sarah.chen@example.com")
    return chat, Conversation.objects.get()


@pytest.fixture
def waiting(customer, claude):
    customer.handoff({"reason": "Please call me back"})
    return Conversation.objects.get(status=ConversationStatus.WAITING)


class TestInbox:
    def test_waiting_conversations_come_first_with_their_wait(self, staff_client, looked_up, waiting):
        html = staff_client.get(INBOX).content.decode()
        assert html.index(str(waiting)) < html.index(str(looked_up[1]))
        assert "Waiting for a person, <span data-since=" in html  # counted on by the page
        assert "0\xa0minutes</span>" in html  # as Django says it
        assert "BK-10042" in html and "sarah.chen@example.com" in html

    def test_each_row_says_who_what_they_wrote_what_about_and_who_has_it(
        self, staff_client, staff_user, looked_up
    ):
        chat, conversation = looked_up
        chat.send("x" * 150 + " <b>end</b>")
        conversation_assign(conversation=conversation, user=staff_user)
        row = _inbox_row(staff_client.get(INBOX).content.decode(), conversation)
        assert "Sarah Chen · sarah.chen@example.com" in row and f">{conversation}<" in row
        assert "x" * 119 + "\u2026" in row and "end" not in row  # the first words only
        assert f'href="/admin/orders/order/{Order.objects.get(number="BK-10042").pk}/change/"' in row
        assert '<td class="field-who_has_it">agent</td>' in row

    def test_a_card_number_across_the_preview_s_end_is_masked_whole(self, staff_client, customer, claude):
        claude.reset(message(text("I can help with orders.")))
        customer.send("x" * 105 + " 4111 1111 1111 1111 exp 12/29")  # the number crosses character 121
        html = staff_client.get(INBOX).content.decode()
        assert "x" * 105 + " [card number]" in html and "4111" not in html and "1111" not in html

    def test_a_customer_s_markup_is_shown_as_text_in_the_inbox(self, staff_client, customer, claude):
        claude.reset(message(text("I can help with orders.")))
        customer.send("<img src=x onerror=alert(1)>")
        html = staff_client.get(INBOX).content.decode()
        assert "&lt;img src=x onerror=alert(1)&gt;" in html and "<img src=x" not in html

    def test_the_admin_index_counts_who_is_waiting(self, staff_client, waiting):
        html = staff_client.get("/admin/").content.decode()
        assert "<strong>1</strong> customer waiting for a person" in html

    @pytest.mark.parametrize("query", ["BK-10042", "sarah.chen@example.com"])
    def test_search_by_order_number_or_email(self, staff_client, looked_up, waiting, query):
        html = staff_client.get(INBOX, {"q": query}).content.decode()
        assert str(looked_up[1]) in html and str(waiting) not in html

    def test_filters_by_status_and_by_who_answers(self, staff_client, staff_user, looked_up, waiting):
        assert str(looked_up[1]) not in staff_client.get(INBOX, {"status__exact": "waiting"}).content.decode()
        assert str(waiting) not in staff_client.get(INBOX, {"assigned": "me"}).content.decode()
        conversation_assign(conversation=waiting, user=staff_user)
        assert str(waiting) in staff_client.get(INBOX, {"assigned": "me"}).content.decode()

    def test_using_the_inbox_keeps_staff_available(self, staff_client, staff_user):
        staff_client.post(f"{INBOX}availability/", {"available": "yes"})
        almost_over = timezone.now() + timedelta(seconds=30)
        StaffAvailability.objects.filter(user=staff_user).update(available_until=almost_over)
        staff_client.get(INBOX)
        assert StaffAvailability.objects.get(user=staff_user).available_until > almost_over + timedelta(
            minutes=5
        )

    def test_staff_say_they_are_available_and_customers_hear_it(self, staff_client, customer, claude):
        staff_client.post(f"{INBOX}availability/", {"available": "yes"})
        assert "You are available" in staff_client.get(INBOX).content.decode()
        assert "will join this chat shortly" in customer.handoff().json()["notice"]
        staff_client.post(f"{INBOX}availability/", {"available": "no"})
        assert customer.transcript().json()["email_needed"] is True


class TestConversationPage:
    def test_shows_tool_calls_results_and_the_validators_verdict(self, staff_client, looked_up):
        html = staff_client.get(_page(looked_up[1])).content.decode()
        assert "Tool call: lookup_order" in html and "&quot;delivered_on&quot;" in html
        assert "Fallback shown: the validator rejected the model's reply" in html
        assert "BK-77777" not in html  # the rejected reply is never stored
        assert 'href="/admin/orders/order/' in html

    def test_each_turn_shows_its_trace(self, staff_client, looked_up):
        html = staff_client.get(_page(looked_up[1])).content.decode()
        trace = html[html.index('id="trace-1"') :]
        assert "Turn 1: fallback (reply rejected)" in trace
        assert "The fallback (the model&#x27;s reply was rejected)" in trace
        assert "Model calls" in trace and trace.count("req_stub_") == 2
        assert "&quot;customer_email&quot;: &quot;&lt;email&gt;&quot;" in trace

    def test_a_reply_reaches_the_customer_and_silences_the_assistant(self, staff_client, waiting, customer):
        response = staff_client.post(_page(waiting), {"action": "reply", "text": "Hello, I'm on it."})
        assert response.status_code == 302
        seen = customer.transcript().json()
        assert seen["status"] == "person"
        assert seen["messages"][-1]["text"] == "Hello, I'm on it."

    def test_a_refused_reply_keeps_the_text_and_says_why(self, staff_client, waiting, colleague):
        conversation_assign(conversation=waiting, user=colleague)
        response = staff_client.post(_page(waiting), {"action": "reply", "text": "My careful answer"})
        html = response.content.decode()
        assert response.status_code == 200
        assert "Bob has this conversation" in html
        assert ">My careful answer</textarea>" in html
        assert not ConversationMessage.objects.filter(role=MessageRole.STAFF).exists()

    def test_take_hand_back_and_close(self, staff_client, staff_user, waiting):
        staff_client.post(_page(waiting), {"action": "take"})
        waiting.refresh_from_db()
        assert (waiting.status, waiting.assigned_to) == (ConversationStatus.PERSON, staff_user)
        staff_client.post(_page(waiting), {"action": "hand_back"})
        waiting.refresh_from_db()
        assert (waiting.status, waiting.assigned_to) == (ConversationStatus.ASSISTANT, None)
        again = staff_client.post(_page(waiting), {"action": "hand_back"}).content.decode()
        assert "The assistant is already answering this conversation." in again
        staff_client.post(_page(waiting), {"action": "close"})
        waiting.refresh_from_db()
        assert waiting.status == ConversationStatus.CLOSED
        assert (
            "This conversation is already closed."
            in staff_client.post(_page(waiting), {"action": "close"}).content.decode()
        )

    def test_an_unknown_action_changes_nothing(self, staff_client, waiting):
        html = staff_client.post(_page(waiting), {"action": "delete_everything"}).content.decode()
        assert "Choose an action." in html
        waiting.refresh_from_db()
        assert waiting.status == ConversationStatus.WAITING


class TestLinksBetweenTheChatAndTheStore:
    def test_an_order_and_a_return_link_to_their_conversations(self, staff_client, claude):
        claude.reset(
            message(
                tool_use(
                    "check_return_eligibility",
                    {"order_id": "BK-10042", "customer_email": "sarah.chen@example.com"},
                )
            ),
            message(text("It can be returned. Shall I start the return?")),
            message(
                tool_use(
                    "initiate_return",
                    {"order_id": "BK-10042", "customer_email": "sarah.chen@example.com", "reason": "Damaged"},
                )
            ),
            message(text("Done.")),
        )
        chat = ChatClient()
        chat.send("Can I return BK-10042? sarah.chen@example.com")
        chat.send("Yes please")
        conversation = Conversation.objects.get()
        record = ReturnRecord.objects.get()

        order_html = staff_client.get(f"/admin/orders/order/{record.order_id}/change/").content.decode()
        return_html = staff_client.get(f"/admin/orders/returnrecord/{record.pk}/change/").content.decode()
        page_html = staff_client.get(_page(conversation)).content.decode()
        assert f'href="{_page(conversation)}"' in order_html
        assert f'href="{_page(conversation)}"' in return_html
        assert f'href="/admin/orders/returnrecord/{record.pk}/change/"' in page_html

    def test_a_cancellation_shows_on_the_order_and_on_the_conversation_with_who_asked(
        self, staff_client, claude
    ):
        conversation = _cancelled_in_the_chat(claude, told="Order BK-10103 is now cancelled.")
        order_row = Order.objects.get(number="BK-10103")

        order_html = staff_client.get(f"/admin/orders/order/{order_row.pk}/change/").content.decode()
        page_html = staff_client.get(_page(conversation)).content.decode()
        assert "processing to cancelled" in order_html
        assert (
            f'through the assistant in <a href="{_page(conversation)}">conversation {conversation.pk}</a>'
            in order_html
        )
        assert "418 Maple Avenue, Apt 2B, Evanston, IL 60201" in order_html  # the address, read-only
        assert 'name="status"' not in order_html  # moved only through the services, never edited here
        assert "BK-10103</a> cancelled (processing to cancelled)" in page_html

    def test_a_cancellation_waiting_for_the_shop_is_never_shown_as_made(self, staff_client, claude, settings):
        settings.BOOKLY_CHANGES_THROUGH_SHOP = ["shopify"]
        Order.objects.filter(number="BK-10103").update(source="shopify", shop_order_id="450789469")
        conversation = _cancelled_in_the_chat(claude, told="I have asked the store to cancel it.")

        page_html = staff_client.get(_page(conversation)).content.decode()
        assert "BK-10103</a> cancelled (processing to cancelled; waiting for the shop)" in page_html


class TestPermissions:
    def test_support_staff_cannot_add_or_delete_conversations(self, staff_client, waiting):
        assert staff_client.get(f"{INBOX}add/").status_code == 403
        assert staff_client.post(f"{INBOX}{waiting.pk}/delete/", {"post": "yes"}).status_code == 403
        assert Conversation.objects.filter(pk=waiting.pk).exists()

    def test_staff_outside_the_group_cannot_read_or_answer(self, client, django_user_model, waiting):
        django_user_model.objects.create_user(username="intern", password="intern-pass-1234", is_staff=True)
        client.post("/admin/login/", {"username": "intern", "password": "intern-pass-1234"})
        assert client.get(_page(waiting)).status_code == 403
        assert client.post(_page(waiting), {"action": "reply", "text": "hi"}).status_code == 403
        assert client.post(f"{INBOX}availability/", {"available": "yes"}).status_code == 403
        assert not ConversationMessage.objects.exists()

    def test_deleting_a_staff_login_puts_their_conversations_back_in_the_queue(
        self, superuser_client, waiting, colleague
    ):
        conversation_assign(conversation=waiting, user=colleague)
        response = superuser_client.post(f"/admin/auth/user/{colleague.pk}/delete/", {"post": "yes"})
        assert response.status_code == 302
        waiting.refresh_from_db()
        assert (waiting.status, waiting.assigned_to) == (ConversationStatus.WAITING, None)

    def test_a_superuser_may_delete_a_conversation(self, superuser_client, waiting):
        assert superuser_client.post(f"{INBOX}{waiting.pk}/delete/", {"post": "yes"}).status_code == 302
        assert not Conversation.objects.exists()


class TestClosingWithTheTranscript:
    def test_the_transcript_goes_to_the_customers_address(self, staff_client, customer, claude, mailoutbox):
        claude.reset(message(text("I can help with the order.")))
        customer.send("My card 4111 1111 1111 1111 was charged twice for my order")
        customer.handoff({"email": "reader@example.com"})
        conversation = Conversation.objects.get()
        staff_client.post(_page(conversation), {"action": "reply", "text": "Your refund is on its way."})
        mailoutbox.clear()
        page = staff_client.post(
            _page(conversation), {"action": "close", "email_transcript": "yes"}, follow=True
        )
        assert "The transcript was emailed to reader@example.com." in page.content.decode()
        (mail,) = mailoutbox
        assert mail.to == ["reader@example.com"]
        # The agent has no first name on their account: "Bookly support" alone.
        assert "Bookly support: Your refund is on its way." in mail.body
        # Card data the customer typed does not leave in a plain email (issue 50).
        assert "4111" not in mail.body and "You: My card" in mail.body

    def test_without_an_address_it_closes_and_says_why_nothing_was_sent(
        self, staff_client, waiting, mailoutbox
    ):
        mailoutbox.clear()
        page = staff_client.post(_page(waiting), {"action": "close", "email_transcript": "yes"}, follow=True)
        assert "No email address is known for this customer." in page.content.decode()
        assert mailoutbox == []
        waiting.refresh_from_db()
        assert waiting.status == ConversationStatus.CLOSED


def test_a_conversation_the_customer_left_is_not_shown_as_waiting_first(staff_client, customer, claude):
    customer.handoff()
    left = Conversation.objects.get()
    customer.reset()
    other = ChatClient()
    other.send("Hello")
    html = staff_client.get(INBOX).content.decode()
    assert "Waiting for a person (the customer left)" in html
    assert html.index(f">{Conversation.objects.exclude(pk=left.pk).get()}<") < html.index(f">{left}<")


class TestReplyReview:
    @pytest.fixture
    def voted(self, claude, customer):
        """Two replies: the first voted not helpful, the second helpful."""
        for question, answer in (
            ("Where is my order?", "What is the order number? It starts with BK-."),
            ("And returns?", "I can help with a return once I have the order number."),
        ):
            claude.reset(message(text(answer)))
            customer.send(question)
        customer.feedback({"turn": 1, "helpful": False})
        customer.feedback({"turn": 2, "helpful": True})
        return Conversation.objects.get()

    def test_the_index_counts_unhelpful_replies_and_the_list_shows_their_words(self, staff_client, voted):
        index = staff_client.get("/admin/").content.decode()
        assert "<strong>1</strong> reply customers found unhelpful" in index

        listed = staff_client.get("/admin/support/turntrace/?helpful__exact=0").content.decode()
        assert "Where is my order?" in listed and "What is the order number? It starts with BK-." in listed
        assert "And returns?" not in listed
        assert f'href="/admin/support/conversation/{voted.pk}/change/#trace-1"' in listed

    def test_traces_are_read_only_even_for_a_superuser(self, superuser_client, voted):
        trace = voted.traces.get(turn=1)
        change = superuser_client.post(f"/admin/support/turntrace/{trace.pk}/change/", {"helpful": ""})
        assert change.status_code == 403
        delete = superuser_client.post(f"/admin/support/turntrace/{trace.pk}/delete/", {"post": "yes"})
        assert delete.status_code == 403
        assert superuser_client.get("/admin/support/turntrace/add/").status_code == 403
        trace.refresh_from_db()
        assert trace.helpful is False

    def test_only_those_who_may_read_conversations_see_what_customers_wrote(
        self, client, django_user_model, voted
    ):
        analyst = django_user_model.objects.create_user(username="ana", is_staff=True)
        analyst.user_permissions.add(Permission.objects.get(codename="view_turntrace"))
        client.force_login(analyst)
        assert client.get("/admin/support/turntrace/").status_code == 403
        analyst.user_permissions.add(Permission.objects.get(codename="view_conversation"))
        assert client.get("/admin/support/turntrace/").status_code == 200


def _cancelled_in_the_chat(claude, *, told: str) -> Conversation:
    """Sarah cancels BK-10103 through the assistant (a scripted Claude that checks, then cancels on her
    yes, and says `told`): the conversation."""
    order = {"order_id": "BK-10103", "customer_email": "sarah.chen@example.com"}
    claude.reset(
        message(tool_use("check_cancellation", order)),
        message(text("It has not shipped. Shall I cancel it?")),
        message(tool_use("cancel_order", order)),
        message(text(told)),
    )
    chat = ChatClient()
    chat.send("Cancel BK-10103 please, sarah.chen@example.com")
    chat.send("Yes, cancel it")
    return Conversation.objects.get()
