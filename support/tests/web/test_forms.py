"""One form per request, read by the page (its POST) and the JSON API (its body): the same mistake gets
the same words in both, each in its own shape."""

import re
from unittest import mock

import pytest
from django.utils.html import escape

from support.models import Conversation
from support.web.forms import ComposerForm, MessageForm, RatingForm, VoteForm, feedback_form

pytestmark = pytest.mark.usefixtures("demo_data", "offline")

QUESTION = "How long does shipping take?"


def _page_errors(html: str) -> list[str]:
    return re.findall(r'<p class="notice notice--error" role="alert">(.*?)</p>', html, re.S)


LONG = "x" * 4001
# The same mistake as the page's form posts it and as the API's JSON sends it, and the API's code for it.
SAME_MISTAKES = [
    ("/chat/send", {"message": LONG}, "send", LONG, "invalid_message"),
    ("/chat/send", {"message": " \u200b "}, "send", " \u200b ", "invalid_message"),
    ("/chat/handoff", {"email": "not an address"}, "handoff", {"email": "not an address"}, "invalid_email"),
    ("/chat/handoff", {"reason": LONG}, "handoff", {"reason": LONG}, "invalid_reason"),
    ("/chat/feedback", {"rating": "6"}, "feedback", {"rating": 6}, "invalid_rating"),
    (
        "/chat/feedback",
        {"rating": "3", "comment": LONG},
        "feedback",
        {"rating": 3, "comment": LONG},
        "invalid_comment",
    ),
    (
        "/chat/feedback",
        {"turn": "1", "helpful": "maybe"},
        "feedback",
        {"turn": 1, "helpful": "?"},
        "invalid_feedback",
    ),
    (
        "/chat/feedback",
        {"turn": "1", "helpful": "yes", "conversation": "not-the-one"},
        "feedback",
        {"turn": 1, "helpful": True, "conversation": "not-the-one"},
        "conversation_ended",
    ),
]


@pytest.mark.parametrize(("page_path", "fields", "api", "body", "code"), SAME_MISTAKES)
def test_the_same_mistake_gets_the_same_words_on_the_page_and_in_the_api(
    client, customer, page_path, fields, api, body, code
):
    client.post("/chat/send", {"message": QUESTION})
    customer.send(QUESTION)

    client.post(page_path, fields)
    answer = getattr(customer, api)(body)

    assert answer.status_code == 400
    assert answer.json()["error"] == code
    assert _page_errors(client.get("/").content.decode()) == [escape(answer.json()["detail"])]


class TestOneShapeTwoSpellings:
    """The page's form spells every value as text; the API's JSON carries its type, and a value spelled as
    the page spells it is a mistake there."""

    def test_a_vote_from_the_page_and_from_the_api_read_alike(self):
        page, api = (
            VoteForm({"turn": "3", "helpful": "no"}),
            VoteForm.from_json({"turn": 3, "helpful": False}),
        )
        assert page.is_valid() and api.is_valid()
        assert page.cleaned_data == api.cleaned_data == {"conversation": None, "turn": 3, "helpful": False}

    @pytest.mark.parametrize(
        "body",
        [{"turn": "3", "helpful": False}, {"turn": 3, "helpful": "no"}, {"turn": 3.0, "helpful": False}],
    )
    def test_the_pages_spelling_is_a_mistake_in_json(self, body):
        assert VoteForm.from_json(body).first_mistake().code == "invalid_feedback"

    @pytest.mark.parametrize("turn", ["-1", "3.0", "٣", "1" * 10])
    def test_the_page_takes_a_turn_as_its_plain_digits_only(self, turn):
        assert not VoteForm({"turn": turn, "helpful": "yes"}).is_valid()

    def test_feedback_is_a_vote_when_it_speaks_of_a_reply_and_a_rating_otherwise(self):
        assert isinstance(feedback_form({"helpful": "yes"}), VoteForm)
        assert isinstance(feedback_form({"comment": "Hmm"}), RatingForm)
        assert isinstance(feedback_form({"turn": 1}, typed=True), VoteForm)
        assert isinstance(feedback_form(None, typed=True), RatingForm)

    def test_a_json_body_with_a_field_of_neither_shape_is_refused_whole_with_both_by_example(self):
        mistake = feedback_form({"rating": 5, "stars": 4}, typed=True).first_mistake()
        assert mistake.code == "invalid_feedback" and mistake.detail.startswith("Send JSON like")


class TestTheComposer:
    def test_a_post_without_the_box_is_an_empty_message_not_a_message_of_another_type(self):
        assert ComposerForm({}).first_mistake().detail == "Please type a message first."
        assert MessageForm.from_json({}).first_mistake().detail == "Please send your message as text."


def test_a_message_that_cannot_be_sent_never_reaches_the_turn(customer, client):
    """Refused before the turn begins, by either way in: it takes none of the turn's work (the model's
    choice among them, which may be the provider's one trial call while its circuit is half open)."""
    with mock.patch("support.web.api.conversation_take_turn") as api_turn:
        assert customer.send("").status_code == 400
    with mock.patch("support.web.page.conversation_take_turn") as page_turn:
        assert client.post("/chat/send", {"message": ""}).status_code == 400
    assert not api_turn.called and not page_turn.called


def test_the_pages_request_for_a_person_may_say_why_as_the_apis_does(client):
    client.post("/chat/handoff", {"reason": "  My parcel arrived soaked  "})
    assert Conversation.objects.get().handoff_note == "My parcel arrived soaked"


def test_a_blank_conversation_reference_names_no_conversation(customer):
    """The page's hidden reference is blank before its first answer: the same as none, both ways in."""
    customer.send(QUESTION)
    assert customer.feedback({"rating": 4, "conversation": ""}).status_code == 200
