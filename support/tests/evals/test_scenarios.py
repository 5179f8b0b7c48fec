"""The scenario suite: every conversation behaves as written, with the offline model answering
directly, and again from behind each provider's adapter (Claude's Messages API through the real
anthropic SDK, an OpenAI-compatible Chat Completions API through the real openai SDK, each against a
local server), so that the provider changes nothing."""

import pytest

from support.assistant.builtin.model import OfflineModel
from support.evals.runner import scenario_run
from support.evals.scenarios import SCENARIOS
from support.llm.chat_completions import ChatCompletionsModel
from support.llm.claude import AnthropicModel
from support.testing.chat_completions_stub import ChatCompletionsStub
from support.testing.messages_stub import MessagesStub, answered_by


def test_the_suite_is_large_enough_and_names_are_unique():
    names = [scenario.name for scenario in SCENARIOS]
    assert len(names) >= 30
    assert len(set(names)) == len(names)


def _behind(stub, adapter, **options):
    """The offline model answering from behind a provider's adapter, its real SDK and a local stub of
    that provider's API: what the scenarios then check went through the mapping both ways."""
    stub.otherwise = answered_by(OfflineModel())
    return adapter(api_key="no-key", model="offline", max_tokens=1024, timeout=10, max_retries=0, **options)


@pytest.fixture(scope="module")
def behind_messages_api():
    stub = MessagesStub().start()
    yield _behind(stub, AnthropicModel, base_url=stub.url)
    stub.stop()


@pytest.fixture(scope="module")
def behind_chat_completions():
    stub = ChatCompletionsStub().start()
    yield _behind(stub, ChatCompletionsModel, base_url=stub.url + "/v1")
    stub.stop()


@pytest.mark.parametrize("provider", ["offline", "messages_api", "chat_completions"])
@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda scenario: scenario.name)
def test_scenario(demo_data, scenario, provider, request):
    model = OfflineModel() if provider == "offline" else request.getfixturevalue(f"behind_{provider}")
    assert scenario_run(scenario, model=model) == []
