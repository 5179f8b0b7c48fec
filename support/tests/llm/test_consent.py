"""How a customer says yes to a change only they can approve: one reading for the tools and the
built-in model."""

import pytest

from support.llm.consent import reads_as_yes


@pytest.mark.parametrize(
    "words", ["yes", "Yes please", "yep, go ahead", "ok", "sure thing", "That\u2019s right", "y"]
)
def test_a_plain_yes_agrees(words):
    assert reads_as_yes(words)
    assert reads_as_yes(words, to_cancel=True)


@pytest.mark.parametrize(
    "words", ["yes, cancel it", "please cancel the order", "cancel it", "ok cancel my order"]
)
def test_naming_the_cancellation_agrees_to_it(words):
    assert reads_as_yes(words, to_cancel=True)


@pytest.mark.parametrize(
    "words",
    [
        "no",
        "no wait",
        "hmm, maybe later",
        "don't cancel it",
        "cancel it? no",
        "cancel the order? no thanks",
        "cancel it? hmm, let me ask my wife",
        "yes, but change line2 to Apt 5",
        "yes? what happens to my money",
        "actually, keep it",
        "what's your return policy?",
    ],
)
def test_a_question_a_no_a_pause_or_a_correction_is_no_yes(words):
    assert not reads_as_yes(words)
    assert not reads_as_yes(words, to_cancel=True)
