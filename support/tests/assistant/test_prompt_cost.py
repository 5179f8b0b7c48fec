"""The billed-token cost of a six-turn conversation, through the simulated prompt cache.

Deterministic (token estimates, not timings): it guards the prompt layout
against growing the cost back past the target of 0.85 x the old design's 5,500.
"""

import math

import pytest
from django.contrib.sessions.backends.db import SessionStore

from orders.models import ReturnRecord
from support.assistant.builtin.model import OfflineModel
from support.assistant.capabilities.registry import CAPABILITIES, TOOLS
from support.assistant.turn import conversation_take_turn
from support.testing.prompt_cache import PromptCache, cost_index, estimate_tokens

CONVERSATION = (
    "How much does shipping cost?",
    "Where is my order BK-10089? My email is james.murphy@example.com",
    "I want to return order BK-10042, my email is sarah.chen@example.com",
    "Yes, please start the return",
    "What's the weather like today?",
    "Thanks, that's all!",
)
OLD_DESIGN_COST_INDEX = 5500
# 5,500 was measured with the tools of the capabilities then (`Capability.old_design`). Each capability added
# since is sent with every call: its tools and its words in the system prompt (its line of tool rules and
# its scope), read from the cache at a tenth of the price; the budget grows by that much and no more.
ADDED_CAPABILITIES = [capability for capability in CAPABILITIES if not capability.old_design]
ADDED_TOOLS = [tool.name for capability in ADDED_CAPABILITIES for tool in capability.tools]
ADDED_WORDS_TOKENS = sum(
    math.ceil(len(f"{capability.prompt}{capability.scope}") / 4)  # the cache's estimate: characters / 4
    for capability in ADDED_CAPABILITIES
)
# Issue 22's rules for offering a person after refusing a store request, and a lookup's shipping address
# (about 30 tokens of history once looked up): 210 tokens measured with its three capabilities' lines of
# tool rules as they were then (85), which are counted above.
ISSUE_22_OTHER_TOKENS = 210 - 85
# Issue 37 states that the store's FAQ topics come before anything out of scope, and to ask which of two
# (138 characters more of system prompt, measured), by the same rule.
ISSUE_37_OTHER_TOKENS = math.ceil(138 / 4)
# Issue 35: an order's result says its currency, which replies name with an amount, and the lookup's
# description its parcels (59 characters more, measured), by the same rule.
ISSUE_35_OTHER_TOKENS = math.ceil(len(', "currency": "USD"') / 4) + math.ceil(59 / 4)


class CachedModel:
    """The offline model behind a simulated prompt cache, keeping each call's billed usage."""

    offline = False
    name = "cached-offline"
    provider = "built-in offline model behind a simulated prompt cache"
    keeps_state = True  # the built-in model's flow, measured as a provider's would be billed

    def __init__(self, cache: PromptCache):
        self.cache = cache
        self.usage: list[dict] = []
        self.model = OfflineModel()

    def create(self, *, system, tools, messages, deadline):
        # Billed as a provider is sent it: without the built-in model's state.
        sent = [{"role": message["role"], "content": message["content"]} for message in messages]
        self.usage.append(self.cache.account({"system": system, "tools": tools, "messages": sent}))
        return self.model.create(system=system, tools=tools, messages=messages, deadline=deadline)


def run_conversation(cache: PromptCache, number: int) -> list[dict]:
    ReturnRecord.objects.all().delete()  # every conversation returns the demo order afresh
    model = CachedModel(cache)
    session = SessionStore()
    session.create()
    for index, text in enumerate(CONVERSATION):
        # Customers differ from their first words, so conversations share only tools and system.
        conversation_take_turn(
            session=session, text=f"Hi, reader {number} here. {text}" if index == 0 else text, model=model
        )
    return model.usage


@pytest.mark.django_db
def test_six_turn_conversation_costs_at_most_085_of_the_old_design(demo_data):
    cache = PromptCache()
    run_conversation(cache, 0)  # warms the shared tools and system prompt, as in steady state
    usage = run_conversation(cache, 1)

    # Two calls for each turn whose tool results the model writes up (an order, a return's check, the
    # return), one for the others: the policy question is answered in the FAQ's words after one call.
    assert len(usage) == 9
    assert sum(call["input_tokens"] for call in usage) == 0
    added = estimate_tokens({"tools": [tool for tool in TOOLS if tool["name"] in ADDED_TOOLS]})
    order_changes = (
        len(usage)
        * 0.1
        * (added + ADDED_WORDS_TOKENS + ISSUE_22_OTHER_TOKENS + ISSUE_37_OTHER_TOKENS + ISSUE_35_OTHER_TOKENS)
    )
    assert cost_index(usage) <= 0.85 * OLD_DESIGN_COST_INDEX + order_changes
