"""The scenario suite: whole customer conversations over the demo data, with what must happen.

One module per capability of the assistant (support/assistant/capabilities/, in the registry's order)
holds the conversations about what that capability does; conversation.py those about the conversation
as a whole; helpers.py what they share (the demo's customers, the tool calls they expect).
"""

from support.evals.runner import Scenario
from support.evals.scenarios import (
    address_change,
    cancellation,
    conversation,
    delivery_problems,
    order_status,
    person,
    policies,
    receipt,
    returns,
)

SCENARIOS: tuple[Scenario, ...] = (
    *order_status.SCENARIOS,
    *returns.SCENARIOS,
    *cancellation.SCENARIOS,
    *address_change.SCENARIOS,
    *delivery_problems.SCENARIOS,
    *policies.SCENARIOS,
    *person.SCENARIOS,
    *receipt.SCENARIOS,
    *conversation.SCENARIOS,
)
