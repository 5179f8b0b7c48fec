"""The scenario suite: every conversation behaves as written, with the offline model answering
directly and again from behind the OpenAI-compatible provider (the real openai SDK, the adapter's
mapping both ways and a local Chat Completions server), so that the provider changes nothing."""

import pytest

from support.evals.runner import scenario_run
from support.evals.scenarios import SCENARIOS
from support.llm.chat_completions import ChatCompletionsModel
from support.llm.offline import OfflineModel
from support.testing.chat_completions_stub import ChatCompletionsStub, answered_by


def test_the_suite_is_large_enough_and_names_are_unique():
    names = [scenario.name for scenario in SCENARIOS]
    assert len(names) >= 30
    assert len(set(names)) == len(names)


@pytest.fixture(scope="module")
def behind_chat_completions():
    stub = ChatCompletionsStub().start()
    stub.otherwise = answered_by(OfflineModel())
    yield ChatCompletionsModel(
        api_key="no-key",
        model="offline",
        max_tokens=1024,
        timeout=10,
        max_retries=0,
        base_url=stub.url + "/v1",
    )
    stub.stop()


@pytest.mark.parametrize("provider", ["offline", "chat_completions"])
@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda scenario: scenario.name)
def test_scenario(demo_data, scenario, provider, request):
    model = OfflineModel() if provider == "offline" else request.getfixturevalue("behind_chat_completions")
    assert scenario_run(scenario, model=model) == []
