"""The staff dashboard: figures counted from real turns, days in the store's time zone, charts with their
tables, CSV of the period, and who may see it."""

import csv
import io
from datetime import UTC, date, datetime, timedelta

import pytest
from django.contrib.auth.models import Group
from django.utils import timezone

from support.conversations.handoff import conversation_assign
from support.insight.traces import TurnOutcome
from support.llm.protocol import OFFER_PERSON, REFUSAL_TEMPLATE
from support.models import Conversation, ModelCall, TurnTrace
from support.staff.dashboard import customer_words_masked, dashboard_get
from support.testing.chat_client import ChatClient
from support.testing.messages_stub import ErrorReply, message, text, tool_use
from support.testing.metric_counts import Counts

pytestmark = pytest.mark.usefixtures("demo_data")

DASHBOARD = "/admin/support/conversation/dashboard/"
SARAH = {"order_id": "BK-10042", "customer_email": "sarah.chen@example.com"}


@pytest.fixture
def traffic(claude):
    """Four turns of two customers (answered, fallback, refused, a tool error), two votes, a rating and
    a third customer who pressed "Talk to a person"."""
    sarah, other = ChatClient(), ChatClient()
    claude.reset(message(tool_use("lookup_order", SARAH)), message(text("Order BK-10042 was delivered.")))
    sarah.send("Where is BK-10042? sarah.chen@example.com")
    claude.reset(message(text("Your order BK-55555 has shipped.")))
    sarah.send("And my other order BK-10089? Call me on 555 010 0199")
    claude.reset(message(text(REFUSAL_TEMPLATE.format(topic="book recommendations"))))
    other.send("Recommend me a thriller")
    claude.reset(
        message(tool_use("lookup_order", {**SARAH, "customer_email": "wrong@example.com"})),
        message(text("I couldn't find an order with that number and email.")),
    )
    other.send("BK-10042, wrong@example.com")
    sarah.feedback({"turn": 1, "helpful": True})
    sarah.feedback({"turn": 2, "helpful": False})
    sarah.feedback({"rating": 4})
    ChatClient().handoff({"reason": "Please call me"})


def _today():
    return timezone.localdate()


def test_the_figures_count_every_turn_vote_rating_and_handoff(traffic):
    total = dashboard_get(start=_today(), end=_today()).total

    assert (total.conversations, total.assisted, total.turns) == (3, 2, 4)
    # Sarah's conversation stands at a fallback (a dead end); the other's last reply answered; the third
    # conversation never reached the assistant.
    assert (total.resolved_rate, total.dead_end_rate) == (0.5, 0.5)
    assert total.handoff_rate == pytest.approx(1 / 3)
    assert [total.rate(outcome) for outcome in (TurnOutcome.ANSWERED, TurnOutcome.FALLBACK)] == [0.5, 0.25]
    assert total.rate(TurnOutcome.REFUSED) == 0.25
    assert (total.tool_calls, total.tool_errors) == (2, 1)
    assert (total.votes_up, total.votes_down, total.ratings) == (1, 0, [4])  # the fallback takes no vote
    assert len(total.latencies_ms) == 4


def test_the_unanswered_questions_are_masked(traffic):
    dashboard = dashboard_get(start=_today(), end=_today())

    assert [row["dead_end"] for row in dashboard.unanswered] == [True, True]  # no person was offered
    words = [row["words"] for row in dashboard.unanswered]
    assert words == ["Recommend me a thriller", "And my other order [order number]? Call me on [number]"]
    assert dashboard.rejections["ungrounded_order_number"] == 1


@pytest.mark.parametrize(
    ("words", "masked"),
    [
        ("bk 10042 and BK-10089", "[order number] and [order number]"),
        ("mail me at jo.doe+books@example.co.uk!", "mail me at [email]!"),
        ("my return RMA-7KQ2XW9P", "my return [RMA number]"),
        ("card 4111 1111 1111 1111 or (555) 010-0199", "card [number] or ([number]"),
        ("20 books in 2 days", "20 books in 2 days"),
    ],
)
def test_customer_words_lose_what_identifies_them(words, masked):
    assert customer_words_masked(text=words) == masked


def test_days_are_the_store_time_zones(claude, customer, settings):
    settings.TIME_ZONE = "America/New_York"
    claude.reset(message(text("What is the order number? It starts with BK-.")))
    customer.send("Where is my order?")
    # 03:00 UTC on the 23rd is the evening of the 22nd in New York.
    TurnTrace.objects.update(created_at=datetime(2026, 11, 23, 3, 0, tzinfo=UTC))

    dashboard = dashboard_get(start=date(2026, 11, 22), end=date(2026, 11, 23))
    assert [figures.turns for figures in dashboard.days.values()] == [1, 0]


def test_latency_percentiles_are_nearest_rank(claude, customer):
    claude.reset(message(text("What is the order number? It starts with BK-.")))
    customer.send("Where is my order?")
    trace = TurnTrace.objects.get()
    TurnTrace.objects.bulk_create(
        TurnTrace(conversation=trace.conversation, turn=n, outcome="answered", total_ms=n, model_ms=0)
        for n in range(2, 101)
    )
    TurnTrace.objects.filter(pk=trace.pk).update(total_ms=1)

    total = dashboard_get(start=_today(), end=_today()).total
    assert (total.p50_ms, total.p95_ms) == (50, 95)


def test_cost_follows_the_price_settings_and_offline_calls_cost_nothing(claude, customer, settings):
    settings.BOOKLY_PRICE_INPUT_PER_MTOK = 2.0
    settings.BOOKLY_PRICE_OUTPUT_PER_MTOK = 10.0
    claude.reset(message(text("What is the order number? It starts with BK-.")))
    customer.send("Where is my order?")
    call = ModelCall.objects.get()
    ModelCall.objects.create(
        conversation=call.conversation, turn=1, model="offline", offline=True, input_tokens=10**6
    )

    total = dashboard_get(start=_today(), end=_today()).total
    expected = (
        call.input_tokens * 2.0 + call.output_tokens * 10.0 + call.cache_read_input_tokens * 0.30
    ) / 1_000_000 + call.cache_creation_input_tokens * 3.75 / 1_000_000
    assert total.cost == pytest.approx(expected)
    assert total.tokens["input_tokens"] == call.input_tokens


class TestPage:
    def test_staff_see_each_chart_with_its_table_and_the_unanswered_questions(self, staff_client, traffic):
        html = staff_client.get(DASHBOARD).content.decode()

        assert html.count('<svg class="chart__svg"') == 7
        assert html.count('<table class="chart__table">') == 7
        assert "Recommend me a thriller" in html and "Call me on [number]" in html
        assert "555 010 0199" not in html
        assert "<td><code>ungrounded_order_number</code></td><td>1</td>" in html
        assert "Customer pressed “Talk to a person”</td><td>1</td>" in html

    def test_the_admin_index_links_to_it(self, staff_client):
        assert f'href="{DASHBOARD}"' in staff_client.get("/admin/").content.decode()

    def test_the_csv_has_a_row_a_day_and_the_total(self, staff_client, traffic):
        end = _today()
        start = end - timedelta(days=2)
        response = staff_client.get(DASHBOARD, {"start": start, "end": end, "format": "csv"})

        assert response["Content-Type"].startswith("text/csv")
        rows = list(csv.DictReader(io.StringIO(response.content.decode())))
        assert [row["day"] for row in rows] == [str(start), str(start + timedelta(days=1)), str(end), "total"]
        assert rows[-1]["turns"] == rows[-2]["turns"] == "4"
        assert rows[-1]["turns_fallback"] == "1" and rows[-1]["helpful_votes"] == "1"

    @pytest.mark.parametrize(
        ("query", "error"),
        [
            (
                {"start": "2026-11-10", "end": "2026-11-01"},
                "The period must end on or after the day it starts.",
            ),
            ({"start": "2024-01-01", "end": "2026-01-01"}, "Choose a period of at most 366 days."),
            ({"start": "yesterday", "end": "2026-11-01"}, "Enter a valid date."),
        ],
    )
    def test_a_wrong_period_is_said_and_the_last_14_days_are_shown(self, staff_client, query, error):
        html = staff_client.get(DASHBOARD, query).content.decode()
        assert error in html
        start = _today() - timedelta(days=13)
        assert f"From {start:%-d %b %Y} to {_today():%-d %b %Y}" in html

    def test_staff_outside_the_support_group_may_not_see_it(self, client, django_user_model):
        user = django_user_model.objects.create_user(username="eve", password="eve-pass-1234", is_staff=True)
        client.force_login(user)
        assert client.get(DASHBOARD).status_code == 403
        user.groups.add(Group.objects.get(name="Support staff"))
        assert client.get(DASHBOARD).status_code == 200
        assert not Conversation.objects.exists()


def test_a_conversation_whose_turns_all_failed_is_not_resolved_by_the_assistant(claude, customer):
    claude.reset(*[ErrorReply(529, "overloaded_error")] * 2)
    customer.send("Where is my order?")

    total = dashboard_get(start=_today(), end=_today()).total
    assert (total.conversations, total.assisted, total.resolved_rate) == (1, 0, None)


def test_handoffs_are_counted_on_the_day_the_conversation_started(claude, customer, staff_user):
    claude.reset(message(text("What is the order number? It starts with BK-.")))
    customer.send("Where is my order?")
    conversation = Conversation.objects.get()
    Conversation.objects.update(created_at=timezone.now() - timedelta(days=1))
    conversation_assign(conversation=conversation, user=staff_user)  # taken today, without being asked

    dashboard = dashboard_get(start=_today() - timedelta(days=1), end=_today())
    assert [(f.conversations, f.handoffs) for f in dashboard.days.values()] == [(1, 1), (0, 0)]
    assert dashboard.total.handoff_rate == 1.0
    assert dashboard.handoff_reasons == {"Staff took it over": 1}


def test_cost_per_conversation_divides_by_the_conversations_that_made_the_calls(claude, customer):
    claude.reset(message(text("What is the order number? It starts with BK-.")))
    customer.send("Where is my order?")
    Conversation.objects.update(created_at=timezone.now() - timedelta(days=30))  # started long ago

    total = dashboard_get(start=_today(), end=_today()).total
    assert total.conversations == 0
    assert total.cost_per_conversation == pytest.approx(total.cost) and total.cost > 0


def test_a_refusal_with_a_person_offered_is_no_dead_end_and_a_no_policy_answer_is_listed(claude):
    counts = Counts()
    claude.reset(message(text(f"{REFUSAL_TEMPLATE.format(topic='invoices')} {OFFER_PERSON}")))
    ChatClient().send("Can I get an invoice?")
    claude.reset(message(text("I don't have a store policy on gift wrapping, so I can't answer it myself.")))
    ChatClient().send("Do you gift wrap?")

    dashboard = dashboard_get(start=_today(), end=_today())
    assert [(row["outcome"], row["dead_end"]) for row in dashboard.unanswered] == [
        ("No policy on it", True),
        ("Refused (out of scope)", False),
    ]
    assert (dashboard.total.dead_ends, dashboard.total.resolved) == (1, 1)
    assert counts.moved("bookly_dead_ends_total", outcome="no_policy") == 1
    assert counts.moved("bookly_dead_ends_total", outcome="refused") == 0
