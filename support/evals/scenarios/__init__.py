"""The scenario suite: whole customer conversations over the demo data, with what must happen.

One module per capability of the assistant, named as it (Capability.name), holds the conversations about
what that capability does; conversation.py those about the conversation as a whole; helpers.py what they
share (the demo's customers, the tool calls they expect). The modules are found here, in the registry's
order (a capability's module needs no line of its own); one named after no capability is refused.
"""

import importlib
import pkgutil

from support.assistant.capabilities.registry import CAPABILITIES
from support.evals.runner import Scenario

_WHOLE_CONVERSATION = "conversation"
_SHARED = "helpers"


def _scenario_modules() -> list[str]:
    order = [capability.name for capability in CAPABILITIES] + [_WHOLE_CONVERSATION]
    found = {module.name for module in pkgutil.iter_modules(__path__)} - {_SHARED}
    if strays := found - set(order):
        raise ImportError(f"Scenario modules named after no capability: {', '.join(sorted(strays))}.")
    return [name for name in order if name in found]


SCENARIOS: tuple[Scenario, ...] = tuple(
    scenario
    for name in _scenario_modules()
    for scenario in importlib.import_module(f"{__name__}.{name}").SCENARIOS
)
