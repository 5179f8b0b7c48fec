"""The built-in model's steps are the capabilities': the registry gathers them, one owner each."""

import pytest

from support.assistant.capabilities.registry import (
    ANSWERS,
    ORDER_TASKS,
    REPLIES,
    TASK_STEPS,
    TASKS,
    TOOL_NAMES,
    TRIGGERS,
    one_each,
)
from support.assistant.understanding.wording import Waiting


def test_every_tool_has_its_capability_s_reply():
    assert set(REPLIES) == set(TOOL_NAMES)


# The order tasks the capabilities' triggers read (Trigger.task); any other task is asked for in words of
# its own (OrderTask.asks), read by the built-in model's own triggers.
RULES_READ = {trigger.task for _, trigger in TRIGGERS if trigger.task}


def test_every_task_is_read_by_a_trigger_or_its_own_words():
    assert {"status", "return", "cancel", "address", "problem"} <= RULES_READ
    assert set(ORDER_TASKS) | RULES_READ == set(TASKS)
    assert {task.tool for task in TASK_STEPS.values()} <= set(TOOL_NAMES)


def test_every_question_asked_has_an_answer():
    """A capability's (by what it waits for), a task's detail, or the built-in model's own: an order's
    details, yes to a person offered, which FAQ topic."""
    own = {
        Waiting.ORDER_NUMBER,
        Waiting.CONFIRM_ORDER_NUMBER,
        Waiting.EMAIL,
        Waiting.DETAILS_AGAIN,
        Waiting.WHICH_ORDER,
        Waiting.WHICH_SHOP,
        Waiting.CODE,
        Waiting.PASS_ON,
        Waiting.OFFER_PERSON,
        Waiting.WHICH_TOPIC,
    }
    details = {task.detail for task in TASK_STEPS.values() if task.detail}
    assert details == {Waiting.ADDRESS}
    assert set(ANSWERS) | details | own == set(Waiting)
    assert not set(ANSWERS) & (details | own)


def test_a_step_two_capabilities_bring_is_refused():
    assert one_each([("a", 1), ("b", 2)], what="reply") == {"a": 1, "b": 2}
    with pytest.raises(ValueError, match="reply for 'a'"):
        one_each([("a", 1), ("a", 2)], what="reply")
