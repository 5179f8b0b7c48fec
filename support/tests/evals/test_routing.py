"""The offline model's routing of first messages, on sets of customer messages written by other
authors (support/evals/routing/: misspelled, run together, marked up, indirect, two requests in one)."""

from io import StringIO

import pytest
from django.core.management import call_command

from support.assistant.builtin.model import OfflineModel
from support.assistant.prompts import system_prompt
from support.assistant.understanding.wording import NO_POLICY_REPLY
from support.evals.routing import (
    reply_is_dead_end,
    resolution_evaluate,
    resolution_sets,
    routing_evaluate,
    routing_sets,
)
from support.llm.protocol import OFFER_PERSON, REFUSAL_TEMPLATE

pytestmark = pytest.mark.usefixtures("demo_data")

# The targets.
TARGETS = {"in scope, served": 0.97, "out of scope, refused or redirected": 0.97, "asking for a person": 0.95}
SETS = routing_sets()


@pytest.mark.parametrize("name", SETS)
def test_the_offline_model_routes_customers_own_words(name):
    report = routing_evaluate(
        model=OfflineModel(), system=[{"type": "text", "text": system_prompt()}], cases=SETS[name]
    )
    shares = report.shares()
    misses = "\n".join(f"{expected} -> {got}: {text}" for text, expected, got in report.misses)
    assert all(shares[figure] >= target for figure, target in TARGETS.items()), f"{shares}\n{misses}"
    assert sum(report.total.values()) >= 300


# Issue 22's target: a store request ends in an answer or a person, a dead end at most this often.
DEAD_END_TARGET = 0.03


@pytest.mark.parametrize("name", resolution_sets())
def test_store_requests_rarely_end_at_a_dead_end(name):
    cases = resolution_sets()[name]
    report = resolution_evaluate(
        model=OfflineModel(), system=[{"type": "text", "text": system_prompt()}], cases=cases
    )
    dead = "\n".join(f"{intent}: {text} -> {said}" for text, intent, said in report.dead_ends)
    assert report.share() <= DEAD_END_TARGET, dead
    assert len(cases) >= 300 and len(report.total) >= 20  # varied: many everyday intents


def test_a_refusal_without_a_person_is_a_dead_end_and_with_one_is_not():
    refusal = REFUSAL_TEMPLATE.format(topic="invoices")
    assert reply_is_dead_end(refusal)
    assert not reply_is_dead_end(f"{refusal} {OFFER_PERSON}")
    assert not reply_is_dead_end(NO_POLICY_REPLY)


def test_run_evals_reports_a_sets_figures_and_with_verbosity_its_misses(db):
    out = StringIO()
    call_command("run_evals", routing=True, only="project", verbosity=2, stdout=out)
    report = routing_evaluate(
        model=OfflineModel(), system=[{"type": "text", "text": system_prompt()}], cases=SETS["project"]
    )
    lines = out.getvalue().splitlines()
    [summary] = [line for line in lines if line.startswith("project (")]
    assert summary.startswith(f"project ({len(SETS['project'])} messages): ")
    for figure, share in report.shares().items():
        assert f"{figure} {share:.1%}" in summary
    assert [line for line in lines if " -> " in line] == [
        f"    {expected} -> {got}: {text!r}" for text, expected, got in report.misses
    ]
    assert not any(line.startswith("letters (") for line in lines)
