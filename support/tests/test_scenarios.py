"""The scenario suite against the offline model: every conversation behaves as written."""

import pytest

from support.evals.runner import scenario_run
from support.evals.scenarios import SCENARIOS
from support.llm.offline import OfflineModel


def test_the_suite_is_large_enough_and_names_are_unique():
    names = [scenario.name for scenario in SCENARIOS]
    assert len(names) >= 30
    assert len(set(names)) == len(names)


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda scenario: scenario.name)
def test_scenario(demo_data, scenario):
    assert scenario_run(scenario, model=OfflineModel()) == []
