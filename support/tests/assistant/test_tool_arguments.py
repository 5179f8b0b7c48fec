"""Tool arguments: one pydantic model per tool gives the schema the model reads and refuses what it
sends wrong, field by field, in words it can act on and never echoing a value."""

import pytest

from support.assistant.capabilities.arguments import InvalidArguments, ToolArguments
from support.assistant.capabilities.delivery_problems import ReportDeliveryProblemArguments
from support.assistant.capabilities.order_status import LookupOrderArguments
from support.assistant.capabilities.person import HandOffArguments
from support.assistant.capabilities.registry import TOOLS
from support.assistant.capabilities.returns import InitiateReturnArguments

SARAH = {"order_id": "BK-10042", "customer_email": "sarah.chen@example.com"}


@pytest.mark.parametrize(
    ("model", "raw", "problems"),
    [
        (InitiateReturnArguments, {**SARAH, "reason": " \n "}, [("reason", "must not be empty")]),
        (
            InitiateReturnArguments,
            {**SARAH, "reason": "x" * 501},
            [("reason", "must be at most 500 characters")],
        ),
        (InitiateReturnArguments, {**SARAH}, [("reason", "is required")]),
        (
            InitiateReturnArguments,
            {**SARAH, "reason": "torn", "item_titles": ["Dune", 7]},
            [("item_titles", "must be a list of strings")],
        ),
        (
            InitiateReturnArguments,
            {**SARAH, "reason": "torn", "item_titles": ["Dune"] * 21},
            [("item_titles", "must list at most 20 titles")],
        ),
        (LookupOrderArguments, {"customer_email": SARAH["customer_email"]}, [("order_id", "is required")]),
        (LookupOrderArguments, {**SARAH, "order_id": ""}, [("order_id", "must not be empty")]),
        (LookupOrderArguments, {**SARAH, "order_id": 10042}, [("order_id", "must be a string")]),
        (LookupOrderArguments, {**SARAH, "order_id": "BK-1"}, [("order_id", "must look like BK-10042")]),
        (
            LookupOrderArguments,
            {**SARAH, "customer_email": "sarah"},
            [("customer_email", "must look like name@example.com")],
        ),
        (
            ReportDeliveryProblemArguments,
            {**SARAH, "problem": "aliens", "details": "x"},
            [("problem", "must be one of 'not_arrived', 'damaged', 'wrong_item', 'missing_item', 'late'")],
        ),
        ("not an object", None, [("(arguments)", "must be a JSON object")]),
    ],
)
def test_each_problem_is_named_by_field_in_words_a_model_can_act_on(model, raw, problems):
    model = LookupOrderArguments if model == "not an object" else model
    with pytest.raises(InvalidArguments) as invalid:
        model.parsed(raw if raw is not None else "BK-10042")
    assert [(problem["field"], problem["problem"]) for problem in invalid.value.problems] == problems


@pytest.mark.parametrize(
    ("model", "raw", "field"),
    [
        (InitiateReturnArguments, {**SARAH, "reason": "{words}"}, "reason"),
        (ReportDeliveryProblemArguments, {**SARAH, "problem": "damaged", "details": "{words}"}, "details"),
        (HandOffArguments, {"reason": "customer_asked", "summary": "{words}"}, "summary"),
    ],
)
def test_card_data_in_the_customers_words_is_masked_before_anything_keeps_them(model, raw, field):
    """A return's reason, a case's details, a note for staff: stored, sent in events, emailed (issue 50)."""
    words = "charged twice on card 4111 1111 1111 1111, password is hunter2"
    given = {key: value.format(words=words) if value == "{words}" else value for key, value in raw.items()}

    kept = getattr(model.parsed(given), field)

    assert "4111 1111" not in kept and "hunter2" not in kept and kept.startswith("charged twice on card")


def test_an_unknown_argument_is_named_as_other_without_its_name():
    with pytest.raises(InvalidArguments) as invalid:
        LookupOrderArguments.parsed({**SARAH, "send_to": "x@evil.example"})
    assert invalid.value.problems == [
        {"field": "(other)", "problem": "only these parameters exist: customer_email, order_id, rma_number"}
    ]


def test_the_schemas_keep_what_the_model_needs():
    by_name = {tool["name"]: tool["input_schema"] for tool in TOOLS}
    address = by_name["check_address_change"]["properties"]["new_address"]
    # A description beside a nested model reaches the model (it says what is kept when left out).
    assert "kept as on the order" in address["description"]
    assert address["additionalProperties"] is False and set(address["properties"]) == {
        "to",
        "line1",
        "line2",
        "city",
        "state",
        "zip",
        "country",
    }
    for schema in by_name.values():
        assert schema["additionalProperties"] is False
        assert set(schema.get("required", [])) <= set(schema["properties"])
        assert "title" not in schema and "$defs" not in str(schema)


def test_a_property_is_never_dropped_for_its_name():
    class Named(ToolArguments):
        title: str
        default: str | None = None

    schema = Named.json_schema()
    assert set(schema["properties"]) == {"title", "default"} and schema["required"] == ["title"]
    assert "default" not in schema["properties"]["default"]  # the keyword goes, the property stays
