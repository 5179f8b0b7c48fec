"""The offline model's routing of first messages, on the project's own set of customer messages
(support/evals/routing_cases.json: misspelled, run together, marked up, indirect, two requests in one)."""

import pytest

from support.assistant.prompts import system_prompt
from support.evals.routing import IN_SCOPE, routing_cases, routing_evaluate
from support.llm.offline import OfflineModel

pytestmark = pytest.mark.usefixtures("demo_data")

# The targets, held here by the set the rules were written against (the acceptance figure is
# a held-out set's, in the closing note).
TARGETS = {"in scope, served": 0.97, "out of scope, refused or redirected": 0.97, "asking for a person": 0.95}


def test_the_offline_model_routes_customers_own_words():
    report = routing_evaluate(
        model=OfflineModel(), system=[{"type": "text", "text": system_prompt()}], cases=routing_cases()
    )
    shares = {
        "in scope, served": report.share(IN_SCOPE),
        "out of scope, refused or redirected": report.share(["out_of_scope"]),
        "asking for a person": report.share(["person"]),
    }
    misses = "\n".join(f"{expected} -> {got}: {text}" for text, expected, got in report.misses)
    assert all(shares[name] >= target for name, target in TARGETS.items()), f"{shares}\n{misses}"
    assert sum(report.total.values()) >= 300
