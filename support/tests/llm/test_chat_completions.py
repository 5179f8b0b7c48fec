"""An OpenAI-compatible provider behind the same boundary: the real openai SDK against a local Chat
Completions stub, through the customer's chat API, every guard in place."""

import io
import json

import pytest
from django.core.management import CommandError, call_command

from support.assistant.configured import get_model
from support.assistant.outcomes import TOO_LONG_REPLY
from support.assistant.validator import FALLBACK_REPLY
from support.llm.chat_completions import ChatCompletionsModel
from support.models import ConversationMessage, ModelCall
from support.testing.chat_completions_stub import Template, completion, echoes_its_prompt
from support.testing.messages_stub import ErrorReply, message, text, tool_use

SARAH = {"order_id": "BK-10042", "customer_email": "sarah.chen@example.com"}


def test_a_lookup_turn_runs_on_the_provider_and_maps_both_ways(openai_model, customer, demo_data):
    openai_model.reset(
        message(tool_use("lookup_order", SARAH, tool_id="call_1")),
        message(text("Order BK-10042 has been delivered.")),
    )
    response = customer.send("Where is BK-10042? My email is sarah.chen@example.com")

    assert response.status_code == 200
    assert response.json()["reply"] == "Order BK-10042 has been delivered."
    first, second = openai_model.requests
    assert first["model"] == "llama3.1:8b" and first["max_tokens"] > 0
    assert first["messages"][0]["role"] == "system" and "<identity>" in first["messages"][0]["content"]
    assert {tool["function"]["name"] for tool in first["tools"]} >= {
        "lookup_order",
        "check_return_eligibility",
    }
    assert (
        first["tools"][0]["type"] == "function"
        and "properties" in first["tools"][0]["function"]["parameters"]
    )
    called, answered = second["messages"][-2:]
    assert called["role"] == "assistant"
    assert called["tool_calls"][0]["id"] == "call_1"
    assert json.loads(called["tool_calls"][0]["function"]["arguments"]) == SARAH
    assert answered["role"] == "tool" and answered["tool_call_id"] == "call_1"
    assert json.loads(answered["content"])["status"] == "delivered"


def test_the_validator_guards_this_provider_too(openai_model, customer, demo_data):
    openai_model.reset(
        message(tool_use("lookup_order", SARAH)),
        message(text("Order BK-10042 shipped yesterday and your refund of $500.00 is on its way.")),
    )
    response = customer.send("Where is BK-10042? My email is sarah.chen@example.com")
    assert response.json()["reply"] == FALLBACK_REPLY


def test_several_tool_calls_are_answered_together_by_id(openai_model, customer, demo_data):
    openai_model.reset(
        message(
            tool_use("lookup_order", SARAH, tool_id="call_a"),
            tool_use("check_return_eligibility", SARAH, tool_id="call_b"),
        ),
        message(text("Order BK-10042 has been delivered.")),
    )
    customer.send("Where is BK-10042 and can I return it? sarah.chen@example.com")
    answers = [entry for entry in openai_model.requests[1]["messages"] if entry["role"] == "tool"]
    assert [answer["tool_call_id"] for answer in answers] == ["call_a", "call_b"]


def test_arguments_that_are_not_json_are_refused_by_the_tool_and_the_model_asked_again(
    openai_model, customer, demo_data
):
    openai_model.reset(
        completion(tool_calls=[("call_x", "lookup_order", '{"order_id": "BK-10042", "customer_email": ')]),
        message(text("What is the email address on the order?")),
    )
    response = customer.send("Where is BK-10042?")
    assert response.json()["reply"] == "What is the email address on the order?"
    (answer,) = [entry for entry in openai_model.requests[1]["messages"] if entry["role"] == "tool"]
    assert json.loads(answer["content"])["error"] == "invalid_arguments"
    assert "must be a JSON object" in answer["content"] and "BK-10042" not in answer["content"]


def test_a_reply_cut_at_its_length_shows_whole_sentences_only(openai_model, customer):
    openai_model.reset(
        completion(
            content="I can help with an order, a return or a policy. Which would you", finish_reason="length"
        )
    )
    assert customer.send("Hi").json()["reply"] == "I can help with an order, a return or a policy."


def test_an_answer_a_content_filter_stopped_is_never_shown(openai_model, customer):
    openai_model.reset(
        completion(content="Sure, here is how to get a refund without", finish_reason="content_filter")
    )
    assert customer.send("Hi").json()["reply"] == FALLBACK_REPLY


def test_cached_prompt_tokens_are_counted_as_cache_reads(openai_model, customer):
    openai_model.reset(
        completion(
            content="Hello! How can I help?",
            usage={
                "prompt_tokens": 1000,
                "completion_tokens": 7,
                "prompt_tokens_details": {"cached_tokens": 800},
            },
        )
    )
    customer.send("Hi")
    call = ModelCall.objects.get()
    assert (call.input_tokens, call.cache_read_input_tokens, call.output_tokens) == (200, 800, 7)
    assert call.model == "gpt-stub"


@pytest.mark.parametrize(
    ("base_url", "field"),
    [
        ("", "max_completion_tokens"),
        ("https://api.openai.com/v1", "max_completion_tokens"),
        ("https://shop.openai.azure.com/openai/v1/", "max_completion_tokens"),
        ("http://localhost:11434/v1", "max_tokens"),
    ],
)
def test_openai_itself_is_sent_max_completion_tokens_and_other_servers_max_tokens(
    settings, db, base_url, field
):
    # db: get_model() reads the provider's circuit, kept in the cache (Redis in the PostgreSQL leg).
    settings.BOOKLY_LLM, settings.OPENAI_API_KEY, settings.OPENAI_BASE_URL = "openai", "sk-test", base_url
    provider = getattr(get_model(), "inner", None)  # the provider behind its circuit, as `assistant` reads it
    assert isinstance(provider, ChatCompletionsModel)
    assert provider.max_tokens_field == field


def test_an_operator_checks_that_the_provider_answers_and_calls_tools(openai_model):
    openai_model.reset(message(tool_use("ping", {})))
    openai_model.otherwise = echoes_its_prompt
    out = io.StringIO()
    call_command("assistant", "--check", stdout=out)
    lines = out.getvalue().splitlines()
    assert lines[0] == f"Assistant: OpenAI-compatible (llama3.1:8b, at {openai_model.url}/v1)."
    assert lines[1].startswith("It answers: model gpt-stub, in ") and lines[2] == "It calls tools: yes."
    assert lines[3] == "Content format: OPENAI_CONTENT_FORMAT=parts is right: it takes content-part arrays."
    assert openai_model.requests[0]["tools"][0]["function"]["name"] == "ping"


# What `--check` says of each kind of server, as set and as it should be: (template, setting, ok, said).
CONTENT_FORMAT_ADVICE = [
    (Template.TAKES_PARTS, "string", True, "OPENAI_CONTENT_FORMAT=string works but is not needed"),
    (
        Template.PYTHON_REPR,
        "parts",
        False,
        "its chat template shows content-part arrays to the model as text (it wrote back {'type': "
        "'text', 'text': 'Repeat this me…): set OPENAI_CONTENT_FORMAT=string",
    ),
    (Template.PYTHON_REPR, "string", True, "OPENAI_CONTENT_FORMAT=string is right: its chat template"),
    (
        Template.STRINGS_ONLY,
        "parts",
        False,
        "it refuses content-part arrays (API error 400): set OPENAI_CONTENT_FORMAT=string",
    ),
    (Template.STRINGS_ONLY, "string", True, "OPENAI_CONTENT_FORMAT=string is right: it refuses content-part"),
]


@pytest.mark.parametrize(("template", "setting", "ok", "said"), CONTENT_FORMAT_ADVICE)
def test_the_check_finds_out_how_a_server_takes_content_and_says_what_to_set(
    openai_model, settings, template, setting, ok, said
):
    settings.OPENAI_CONTENT_FORMAT = setting
    openai_model.reset(message(tool_use("ping", {})), template=template)
    openai_model.otherwise = echoes_its_prompt
    out = io.StringIO()
    if ok:
        call_command("assistant", "--check", stdout=out)
        assert said in out.getvalue().splitlines()[-1]
    else:
        with pytest.raises(CommandError) as failed:
            call_command("assistant", "--check", stdout=out)
        assert said in str(failed.value)
    # The probe sends parts whatever is set: that is what it finds out about.
    assert isinstance(openai_model.requests[1]["messages"][-1]["content"], list)


def test_a_model_that_writes_part_syntax_however_it_is_sent_is_told_no_setting_cures_it(openai_model):
    openai_model.reset(message(tool_use("ping", {})))
    openai_model.otherwise = lambda request: message(text("&#39;type&#39;: &#39;text&#39; Repeat this"))
    with pytest.raises(CommandError, match="even for a message sent as one string; no setting cures that"):
        call_command("assistant", "--check", stdout=io.StringIO())


def test_a_server_that_refuses_the_probe_as_a_string_too_is_not_said_to_need_strings(openai_model):
    openai_model.reset(message(tool_use("ping", {})))
    openai_model.otherwise = ErrorReply(400, "invalid_request_error", message="max_tokens is too large")
    with pytest.raises(CommandError) as failed:
        call_command("assistant", "--check", stdout=io.StringIO())
    assert str(failed.value) == "Content format: the model did not answer the probe: API error 400."


def test_a_model_that_calls_no_tools_still_learns_its_content_format(openai_model):
    # Gemma 3 270M behind llama.cpp's server: both are wrong, and the operator hears of both.
    openai_model.reset(message(text("Pong!")), template=Template.PYTHON_REPR)
    openai_model.otherwise = echoes_its_prompt
    with pytest.raises(CommandError) as failed:
        call_command("assistant", "--check", stdout=io.StringIO())
    tools, content = str(failed.value).splitlines()
    assert "needs a model that calls tools" in tools and "set OPENAI_CONTENT_FORMAT=string" in content


def test_sent_as_strings_a_turn_with_its_reminder_and_tool_calls_suits_a_server_that_takes_no_arrays(
    openai_model, settings, customer, demo_data
):
    settings.OPENAI_CONTENT_FORMAT = "string"
    openai_model.reset(
        message(tool_use("lookup_order", SARAH, tool_id="call_1")),
        message(text("Order BK-10042 has been delivered.")),
        template=Template.STRINGS_ONLY,
    )
    response = customer.send("Where is BK-10042? My email is sarah.chen@example.com")

    assert response.json()["reply"] == "Order BK-10042 has been delivered."
    contents = [entry["content"] for body in openai_model.requests for entry in body["messages"]]
    assert {type(content) for content in contents} == {str}
    asked = openai_model.requests[0]["messages"][-1]["content"]
    assert asked.startswith("Where is BK-10042?") and "\n\n<reminder>" in asked


@pytest.mark.parametrize(
    ("reply", "said"),
    [
        (message(text("Pong!")), "needs a model that calls tools"),
        (
            ErrorReply(404, "not_found_error", message="model 'llama3.1:8b' not found"),
            "did not answer: API error 404",
        ),
    ],
)
def test_a_provider_that_cannot_serve_bookly_fails_the_check_saying_why(openai_model, reply, said):
    openai_model.reset(reply)
    openai_model.otherwise = echoes_its_prompt
    with pytest.raises(CommandError, match=said):
        call_command("assistant", "--check", stdout=io.StringIO())


def _with_message_fields(reply: dict, **fields) -> dict:
    reply["choices"][0]["message"].update(fields)
    return reply


ASKED = "What is the order number of your order?"


@pytest.mark.parametrize(
    "reply",
    [
        # Qwen3 or DeepSeek-R1 behind a server without a reasoning parser: the thinking in the content.
        completion(content=f"<think>\nThey may want a refund approved for BK-99999.\n</think>\n\n{ASKED}"),
        # Behind one with a parser (vLLM, Ollama, DeepSeek's API): a field of its own.
        _with_message_fields(
            completion(content=ASKED), reasoning_content="They may want a refund approved for BK-99999."
        ),
        _with_message_fields(completion(content=ASKED), reasoning="They may want a refund approved."),
        # The chat template opened the thinking in the prompt: only its end is in the output.
        completion(content=f"They may want a refund approved for BK-99999.\n</think>\n\n{ASKED}"),
    ],
    ids=["think tags", "reasoning_content", "reasoning", "closing tag only"],
)
def test_a_reasoning_model_s_thinking_is_never_shown_stored_or_sent_back(openai_model, customer, reply):
    openai_model.reset(reply, message(text("You're welcome!")))
    assert customer.send("Where is my order?").json()["reply"] == ASKED
    customer.send("Thanks")
    kept = json.dumps(list(ConversationMessage.objects.values_list("content", "visible_text")))
    assert "refund approved" not in kept
    assert "refund approved" not in json.dumps(openai_model.requests[1])


def test_thinking_cut_off_before_its_answer_shows_nothing_of_it(openai_model, customer):
    openai_model.reset(
        completion(content="<think>So: it is late. Say sorry. Then the", finish_reason="length")
    )
    assert customer.send("Where is my order?").json()["reply"] == TOO_LONG_REPLY


@pytest.mark.parametrize(
    "reply",
    [
        _with_message_fields(completion(content=None), refusal="I can't help with refunds without proof."),
        _with_message_fields(completion(content="Sure: no proof needed"), refusal="I can't help, no proof."),
        completion(content=None),
        completion(content="   "),
        {**completion(content=ASKED), "choices": []},
    ],
    ids=["refusal", "refusal with words", "no content", "blank", "no choices"],
)
def test_a_refusal_or_an_empty_answer_is_the_fallback(openai_model, customer, reply):
    openai_model.reset(reply)
    response = customer.send("Where is my order?").json()
    assert response["reply"] == FALLBACK_REPLY
    assert "proof" not in json.dumps(list(ConversationMessage.objects.values_list("content", flat=True)))
    if reply["choices"] and reply["choices"][0]["message"].get("refusal"):
        assert ModelCall.objects.get().stop_reason == "refusal"


def test_words_said_alongside_tool_calls_go_back_with_them(openai_model, customer, demo_data):
    openai_model.reset(
        completion(
            content="Let me look that up.",
            tool_calls=[("call_1", "lookup_order", json.dumps(SARAH))],
            finish_reason="tool_calls",
        ),
        message(text("Order BK-10042 has been delivered.")),
    )
    reply = customer.send("Where is BK-10042? sarah.chen@example.com").json()["reply"]
    assert reply == "Order BK-10042 has been delivered."
    called = openai_model.requests[1]["messages"][-2]
    assert called["content"] == "Let me look that up." and called["tool_calls"][0]["id"] == "call_1"
