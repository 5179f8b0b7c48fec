"""A tool call as a model sent it is data on the staff pages: never a format string, never markup, never
a page of text (finding 3 of issue 33), whichever provider sent it: an OpenAI-compatible server can send
a `null` name."""

import pytest

from support.models import Conversation
from support.testing.messages_stub import message, text, tool_use

# Long enough to blow up a page if shown whole; a name is recognisable from its first 80 characters.
LONG_NAME = "lookup_order" + "y" * 10_000
# Far more than staff need to see of the arguments.
LONG_ARGUMENT = "<b>" + "z" * 20_000


def _staff_page(model_api, customer, staff_client, name, arguments):
    """The staff conversation page after a real turn in which the model called `name` with `arguments`."""
    model_api.reset(
        message(tool_use(name, arguments)),
        message(text("Could you give me your order number and email?")),
    )
    assert customer.send("Where is my order?").status_code == 200
    conversation = Conversation.objects.get()
    page = staff_client.get(f"/admin/support/conversation/{conversation.pk}/change/")
    assert page.status_code == 200
    assert len(page.content) < 100_000
    return page.content.decode()


@pytest.mark.parametrize(
    ("name", "shown"),
    [
        ("x{nosuchkey}", "an unknown tool (name \u201cx{nosuchkey}\u201d)"),
        ("{order:>30000000}", "an unknown tool (name \u201c{order:&gt;30000000}\u201d)"),
        ("{order.__class__.__mro__}", "an unknown tool (name \u201c{order.__class__.__mro__}\u201d)"),
        (None, "an unknown tool (no name)"),
        (12, "an unknown tool (a name that is not text: int)"),
        ({"a": 1}, "an unknown tool (a name that is not text: dict)"),
        (LONG_NAME, "an unknown tool (name \u201clookup_order" + "y" * 68 + "\u2026 (9,932 more characters)"),
        (
            "<script>alert(1)</script>",
            "an unknown tool (name \u201c&lt;script&gt;alert(1)&lt;/script&gt;\u201d)",
        ),
    ],
)
def test_a_models_tool_name_is_shown_to_staff_as_text(model_api, customer, staff_client, name, shown):
    body = _staff_page(
        model_api, customer, staff_client, name, {"order_id": "BK-10042", "note": LONG_ARGUMENT}
    )

    assert "Called " + shown in body
    assert "<script>alert" not in body and "<b>zzz" not in body
    assert "z" * 5_000 not in body  # the raw arguments are cut short too


def test_a_known_tools_odd_arguments_are_only_substituted_cut_short(claude, customer, staff_client):
    body = _staff_page(
        claude,
        customer,
        staff_client,
        "lookup_order",
        {"order_id": "{topic:>30000000}<i>" + "9" * 10_000, "customer_email": "a@b.co"},
    )

    assert "Looked up {topic:&gt;30000000}&lt;i&gt;" + "9" * 60 + "\u2026" in body
    assert "9" * 5_000 not in body
