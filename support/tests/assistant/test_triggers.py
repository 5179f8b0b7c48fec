"""Which capability takes a message is decided by what the capabilities declare (capabilities/base.Trigger):
precedences no two triggers share, and for each overlap with another capability's request, that it comes
first (`over`). An overlap nobody declared is found here, in the customers' words of the evaluation sets
the built-in model's phrasings and the scenarios."""

import json
from collections import defaultdict

import pytest

from support.assistant.builtin.intents import RULES, _in_precedence
from support.assistant.capabilities.base import Trigger
from support.assistant.capabilities.registry import TASKS, TRIGGERS
from support.assistant.understanding.message import Message
from support.evals.routing import resolution_sets, routing_sets
from support.evals.scenarios import SCENARIOS

PHRASINGS = "support/assistant/builtin/phrasings.json"


@pytest.fixture(scope="module")
def customers_words(request) -> list[str]:
    texts = [
        case["text"] for cases in (*routing_sets().values(), *resolution_sets().values()) for case in cases
    ]
    phrasings = json.loads((request.config.rootpath / PHRASINGS).read_text())
    scenarios = [exchange.say for scenario in SCENARIOS for exchange in scenario.turns if exchange.say]
    return texts + [text for route in phrasings for text in phrasings[route]] + scenarios


def test_an_overlap_of_two_capabilities_requests_is_declared(customers_words):
    undeclared: dict[tuple[str, str], list[str]] = defaultdict(list)
    for text in customers_words:
        for has_prior_order in (False, True):
            message = Message(text, has_prior_order=has_prior_order, topics=[])
            read = [(owner, trigger) for owner, trigger in TRIGGERS if trigger.reads(message) is not None]
            if not read:
                continue
            first, trigger = min(read, key=lambda pair: pair[1].precedence)
            for other, _ in read:
                if other != first and not trigger.comes_before(other):
                    undeclared[first, other].append(text)
    assert not undeclared, {pair: texts[:3] for pair, texts in undeclared.items()}


def test_a_trigger_reads_a_task_only_as_the_one_it_declares(customers_words):
    misread = set()
    for text in customers_words:
        message = Message(text, has_prior_order=True, topics=[])
        for owner, trigger in TRIGGERS:
            intent = trigger.reads(message)
            if intent is not None and intent.kind in TASKS and intent.kind != trigger.task:
                misread.add((owner, trigger.precedence, intent.kind))
    assert misread == set()


def test_every_capability_trigger_takes_some_message_first(customers_words):
    """A trigger that some earlier one always takes from is dead: its precedence is wrong."""
    taken = set()
    for text in customers_words:
        message = Message(text, has_prior_order=True, topics=[])
        for owner, trigger in RULES:
            if trigger.reads(message) is not None:
                taken.add((owner, trigger.precedence))
                break
    assert {(owner, trigger.precedence) for owner, trigger in TRIGGERS} <= taken


def test_two_triggers_at_one_precedence_are_refused():
    def reads(_message):
        return None

    assert [
        pair[1].precedence for pair in _in_precedence([("a", Trigger(2, reads)), ("b", Trigger(1, reads))])
    ] == [
        1,
        2,
    ]
    with pytest.raises(ValueError, match="Triggers of a and b share precedence 1"):
        _in_precedence([("a", Trigger(1, reads)), ("b", Trigger(1, reads))])
