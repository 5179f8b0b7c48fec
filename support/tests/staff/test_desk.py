"""The support desk on a conversation's page, through real staff logins: notes between colleagues,
giving a conversation to a colleague, and saved replies with their placeholders."""

import json

import pytest

from support.conversations.handoff import conversation_assign
from support.models import (
    Conversation,
    ConversationAssignment,
    ConversationNote,
    ConversationStatus,
    MessageRole,
    SavedReply,
)
from support.testing.chat_client import ChatClient
from support.testing.messages_stub import message, text, tool_use

pytestmark = pytest.mark.usefixtures("demo_data")

SAVED = "/admin/support/savedreply/"


def _page(conversation: Conversation) -> str:
    return f"/admin/support/conversation/{conversation.pk}/change/"


@pytest.fixture
def waiting(customer, claude):
    claude.reset(message(text("I can help with orders and returns.")))
    customer.send("My parcel never came")
    customer.handoff()
    return Conversation.objects.get()


@pytest.fixture
def sarah_looked_up(claude):
    """A conversation that looked up Sarah's order and started nothing else."""
    claude.reset(
        message(
            tool_use("lookup_order", {"order_id": "BK-10042", "customer_email": "sarah.chen@example.com"})
        ),
        message(text("Order BK-10042 was delivered on 2026-03-30.")),
    )
    ChatClient().send("Where is BK-10042? I'm sarah.chen@example.com")
    return Conversation.objects.get()


class TestNotes:
    def test_a_note_is_shown_to_staff_and_never_to_the_customer_or_the_model(
        self, staff_client, customer, claude, waiting
    ):
        answer = staff_client.post(
            _page(waiting), {"action": "note", "text": "Courier says <b>lost</b>; refund?"}
        )
        assert answer.status_code == 302 and answer["Location"].endswith("#composer")
        html = staff_client.get(_page(waiting)).content.decode()
        assert "Note from agent · only staff see it" in html
        assert "Courier says &lt;b&gt;lost&lt;/b&gt;; refund?" in html  # text, never markup

        assert "Courier" not in json.dumps(customer.transcript().json())
        staff_client.post(_page(waiting), {"action": "hand_back"})
        claude.reset(message(text("Anything else?")))
        customer.send("Thanks")
        assert "Courier" not in json.dumps(claude.requests[-1])

    def test_a_note_too_long_is_refused_and_kept_in_the_box(self, staff_client, waiting):
        long = "x" * 10_000
        html = staff_client.post(_page(waiting), {"action": "note", "text": long}).content.decode()
        assert "A note can be at most 5,000 characters; this one has 10,000. It was not saved" in html
        assert f">{long}</textarea>" in html
        assert not ConversationNote.objects.exists()

    def test_the_page_s_script_gets_the_refusal_in_json(self, staff_client, waiting):
        answer = staff_client.post(
            _page(waiting), {"action": "note", "text": "  "}, HTTP_ACCEPT="application/json"
        )
        assert answer.status_code == 409 and answer.json() == {"error": "Write the note first."}


def test_what_the_customer_writes_while_waiting_follows_the_turn_s_tools(staff_client, customer, waiting):
    customer.send("Still there?")
    html = staff_client.get(_page(waiting)).content.decode()
    assert html.index('id="trace-1"') < html.index("Still there?")


class TestAssignment:
    def test_given_to_a_colleague_who_is_away_they_are_emailed_and_it_is_recorded(
        self, staff_client, staff_user, colleague, waiting, mailoutbox, django_capture_on_commit_callbacks
    ):
        with django_capture_on_commit_callbacks(execute=True):
            answer = staff_client.post(
                _page(waiting),
                {"action": "assign", "assignee": colleague.pk, "expected_assignee": ""},
                HTTP_ACCEPT="application/json",
            )
        assert answer.json() == {"message": "Bob has it now. They are away: they were emailed."}
        waiting.refresh_from_db()
        assert (waiting.assigned_to, waiting.status) == (colleague, ConversationStatus.WAITING)
        (mail,) = [mail for mail in mailoutbox if mail.to == ["bob@bookly.example"]]
        assert f"/admin/support/conversation/{waiting.pk}/change/" in mail.body
        change = ConversationAssignment.objects.get()
        assert (change.assigned_to, change.assigned_by) == (colleague, staff_user)
        assert "Bob has it, from agent" in staff_client.get(_page(waiting)).content.decode()

    def test_a_colleague_who_is_available_is_not_emailed(
        self, staff_client, client, colleague, waiting, mailoutbox, django_capture_on_commit_callbacks
    ):
        colleague.set_password("bob-pass-1234")
        colleague.save()
        bob = type(client)()
        bob.post("/admin/login/", {"username": "bob", "password": "bob-pass-1234"})
        bob.post("/admin/support/conversation/availability/", {"available": "yes"})
        mailoutbox.clear()
        with django_capture_on_commit_callbacks(execute=True):
            staff_client.post(_page(waiting), {"action": "assign", "assignee": colleague.pk})
        assert mailoutbox == []
        # Bob's inbox says it is his.
        state = bob.get("/admin/support/conversation/inbox/state/").json()
        assert state["mine"] == [waiting.pk]
        mine = bob.get("/admin/support/conversation/", {"assigned": "me"}).content.decode()
        assert f">{waiting}<" in mine and '<td class="field-who_has_it">Bob</td>' in mine

    def test_two_colleagues_assigning_at_once_the_second_is_told_and_nothing_changes(
        self, staff_client, staff_user, colleague, waiting
    ):
        # Both read the page while nobody had it; one gives it to Bob first.
        conversation_assign(conversation=waiting, user=colleague)
        html = staff_client.post(
            _page(waiting), {"action": "assign", "assignee": staff_user.pk, "expected_assignee": ""}
        ).content.decode()
        assert "Someone changed who has this conversation a moment ago: it is now with Bob" in html
        waiting.refresh_from_db()
        assert waiting.assigned_to == colleague

    def test_every_change_of_who_has_it_is_recorded(self, staff_client, staff_user, waiting):
        staff_client.post(_page(waiting), {"action": "take"})
        staff_client.post(
            _page(waiting), {"action": "assign", "assignee": "", "expected_assignee": staff_user.pk}
        )
        waiting.refresh_from_db()
        assert (waiting.status, waiting.assigned_to) == (ConversationStatus.WAITING, None)
        assert [change.assigned_to for change in ConversationAssignment.objects.all()] == [staff_user, None]

    def test_only_someone_who_may_answer_can_be_given_one(self, staff_client, django_user_model, waiting):
        clerk = django_user_model.objects.create_user(username="clerk", is_staff=True)
        html = staff_client.post(
            _page(waiting), {"action": "assign", "assignee": clerk.pk, "expected_assignee": ""}
        ).content.decode()
        assert "Clerk cannot answer conversations." in html  # admin's messages start with a capital
        assert ">clerk" not in staff_client.get(_page(waiting)).content.decode()
        waiting.refresh_from_db()
        assert waiting.assigned_to is None

    def test_one_the_assistant_answers_is_not_given_away(self, staff_client, colleague, customer, claude):
        claude.reset(message(text("I can help with orders.")))
        customer.send("Hello")
        conversation = Conversation.objects.get()
        html = staff_client.post(
            _page(conversation), {"action": "assign", "assignee": colleague.pk, "expected_assignee": ""}
        ).content.decode()
        assert "The assistant is answering this conversation: take it" in html
        conversation.refresh_from_db()
        assert conversation.assigned_to is None

    def test_given_to_a_colleague_only_they_reply_until_someone_takes_it_over(
        self, staff_client, staff_user, colleague, waiting
    ):
        staff_client.post(
            _page(waiting), {"action": "assign", "assignee": colleague.pk, "expected_assignee": ""}
        )
        html = staff_client.post(_page(waiting), {"action": "reply", "text": "Hello!"}).content.decode()
        assert "Bob has this conversation. Take it over first" in html
        # A take from a page read before someone else took it is refused; from a page showing Bob, it works.
        conversation_assign(conversation=waiting, user=colleague)
        refused = staff_client.post(_page(waiting), {"action": "take", "expected_assignee": ""})
        assert "it is now with Bob" in refused.content.decode()
        staff_client.post(_page(waiting), {"action": "take", "expected_assignee": colleague.pk})
        waiting.refresh_from_db()
        assert waiting.assigned_to == staff_user

    def test_nobody_after_a_person_it_waits_again_from_now_and_is_announced(
        self, staff_client, staff_user, waiting, mailoutbox, django_capture_on_commit_callbacks
    ):
        staff_client.post(_page(waiting), {"action": "take"})
        waiting.refresh_from_db()
        first_wait = waiting.handoff_at
        mailoutbox.clear()
        with django_capture_on_commit_callbacks(execute=True):
            staff_client.post(
                _page(waiting), {"action": "assign", "assignee": "", "expected_assignee": staff_user.pk}
            )
        waiting.refresh_from_db()
        assert waiting.status == ConversationStatus.WAITING and waiting.handoff_at > first_wait
        assert [mail.subject for mail in mailoutbox] == [
            f"[Bookly] A customer is waiting (conversation {waiting.pk})"
        ]


class TestSavedReplies:
    def test_staff_keep_their_own_and_an_unknown_placeholder_is_refused_with_the_list(self, staff_client):
        form = {"title": "Refund", "text": "Hi {{first_name}}, your refund for {{order}} is on its way."}
        html = staff_client.post(f"{SAVED}add/", form).content.decode()
        assert "There is no placeholder {{order}}. You may use: {{first_name}}" in html
        assert "{{order_number}}: the order looked up last in this conversation" in html
        form["text"] = form["text"].replace("{{order}}", "{{order_number}}")
        assert staff_client.post(f"{SAVED}add/", form).status_code == 302
        owner = SavedReply.objects.get().owner
        assert owner is not None and owner.username == "agent"
        # The same title again is said so, not a crash.
        assert "You already have a saved reply with this title." in (
            staff_client.post(f"{SAVED}add/", form).content.decode()
        )

    def test_a_colleague_s_own_saved_replies_are_theirs_alone(self, staff_client, colleague, waiting):
        SavedReply.objects.create(title="Bob's", text="Bob's words", owner=colleague)
        assert "Bob&#x27;s" not in staff_client.get(SAVED).content.decode()
        url = f"/admin/support/conversation/{waiting.pk}/saved-replies/"
        assert staff_client.get(url).json() == {"replies": []}

    def test_staff_use_the_shared_ones_but_only_superusers_change_them(self, staff_client):
        shared = SavedReply.objects.create(title="Hours", text="We answer 9-5.")
        assert staff_client.get(f"{SAVED}{shared.pk}/change/").status_code == 200  # to read
        staff_client.post(f"{SAVED}{shared.pk}/change/", {"title": "Hours", "text": "Changed"})
        shared.refresh_from_db()
        assert shared.text == "We answer 9-5."

    def test_the_reply_box_gets_them_filled_with_what_is_missing_named(
        self, staff_client, staff_user, sarah_looked_up
    ):
        SavedReply.objects.create(title="Return", text="Hi {{first_name}}, {{rma_number}} is ready.")
        SavedReply.objects.create(title="Mine", text="{{order_number}} by {{agent_name}}", owner=staff_user)
        url = f"/admin/support/conversation/{sarah_looked_up.pk}/saved-replies/"
        replies = staff_client.get(url).json()["replies"]
        assert replies == [
            {
                "id": replies[0]["id"],
                "title": "Mine",
                "shared": False,
                "text": "BK-10042 by agent",
                "missing": [],
            },
            {
                "id": replies[1]["id"],
                "title": "Return",
                "shared": True,
                "text": "Hi Sarah, {{rma_number}} is ready.",
                "missing": ["rma_number"],
            },
        ]

    def test_a_reply_with_a_placeholder_left_is_not_sent(self, staff_client, waiting):
        answer = staff_client.post(
            _page(waiting),
            {"action": "reply", "text": "Your order {{order_number}} is on its way."},
            HTTP_ACCEPT="application/json",
        )
        assert answer.status_code == 409
        assert answer.json()["error"].startswith("Your reply still has {{order_number}}")
        assert not waiting.messages.filter(role=MessageRole.STAFF).exists()
