"""Where a model takes a customer's first message: the routing evaluation.

A route is read from what the model does, as a customer would see it: the tool it calls (after being
given an order number and email if it asks for them), or the fixed reply it gives. Cases are
{"text", "route"} pairs; the routes: each capability's (Capability.route: order_status, return, cancel,
address, problem, receipt, refund, person; a policy looked up is `policy:<topic>`, the demo's three
topics policy_shipping, policy_returns, policy_password), and greeting, thanks, goodbye, no_number,
out_of_scope.

An out_of_scope message is served by the refusal, or by the honest "no policy on that" with a person
offered; everything in scope must reach its own route.

The sets (support/evals/routing/), each written by a different author to one brief of what Bookly
does, none of them among the offline model's phrasings (support/assistant/builtin/phrasings.json):
- project.json (340): the rules were written against it;
- letters.json (451): the whole range of customers, from formal letters to phone fragments; held
  out while the classifier was built (measured without its misses read), then read;
- desk.json (930): 30 messages for each of 27 everyday support-desk intents (plus greetings,
  thanks, goodbyes, no order number), each labelled with its intent too; the acceptance set,
  measured once on the finished classifier before anything was read of it.
Issue 14's closing note gives each set's figures before and after.
"""

import json
import time
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from support.assistant.capabilities.registry import CAPABILITIES, TOOLS
from support.assistant.outcomes import reply_leaves_dead_end
from support.assistant.prompts import TURN_REMINDER
from support.assistant.understanding.wording import (
    ASK_ADDRESS,
    ASK_EMAIL,
    GENERIC_ERROR_REPLY,
    GOODBYE_REPLY,
    GREETING_REPLY,
    NO_POLICY_REPLY,
    THANKS_REPLY,
    ask_order_number,
    no_number_reply,
)
from support.llm.protocol import REFUSAL_TEMPLATE
from support.llm.types import Model

ROUTING_SETS = Path(__file__).with_name("routing")
RESOLUTION_SETS = Path(__file__).with_name("resolution")
# A first message that reaches a capability's tool takes the capability's route (Capability.route).
_TOOL_ROUTES = {tool.name: capability.route for capability in CAPABILITIES for tool in capability.tools}
# The sets' own names for the demo's three FAQ topics' routes (other topics: `policy:<topic>`).
POLICY_ROUTE_PREFIX = "policy:"
_POLICY_ROUTES = {
    "policy:shipping": "policy_shipping",
    "policy:returns_overview": "policy_returns",
    "policy:password_reset": "policy_password",
}
IN_SCOPE = (
    *(capability.route for capability in CAPABILITIES if "{" not in capability.route),
    *_POLICY_ROUTES.values(),
    "greeting",
    "thanks",
    "goodbye",
    "no_number",
)
_FIXED_ROUTES = {
    GREETING_REPLY: "greeting",
    THANKS_REPLY: "thanks",
    GOODBYE_REPLY: "goodbye",
    NO_POLICY_REPLY: "out_of_scope",
}
# What the customer answers when asked for an order detail, to see which tool the model then calls.
_ANSWERS = (
    (ask_order_number, "BK-10042"),
    (lambda: ASK_EMAIL, "sarah.chen@example.com"),
    (lambda: ASK_ADDRESS, "Sarah Chen, 9 Lake Shore Drive, Chicago, IL 60611"),
)
_REFUSAL_START = REFUSAL_TEMPLATE.split("{topic}")[0]


def _customer(text: str) -> dict:
    return {
        "role": "user",
        "content": [{"type": "text", "text": text}, {"type": "text", "text": TURN_REMINDER}],
    }


def message_route(*, model: Model, text: str, system: list[dict]) -> str:
    """The route the model takes for `text` as a conversation's first message."""
    return message_first_answer(model=model, text=text, system=system)[0]


def message_first_answer(*, model: Model, text: str, system: list[dict]) -> tuple[str, str]:
    """The route the model takes for `text`, and the last words it said (empty when it called a tool). A
    FAQ topic other than the demo's is the route `policy:<topic>`."""
    messages = [_customer(text)]
    for _ in range(4):  # the order number, the email, a new address, then the tool
        reply = model.create(system=system, tools=TOOLS, messages=messages, deadline=time.monotonic() + 60)
        tool_uses = [block for block in reply.content if block["type"] == "tool_use"]
        if tool_uses:
            return _tool_route(tool_uses[0]["name"], tool_uses[0]["input"]), ""
        said = " ".join(block["text"] for block in reply.content if block["type"] == "text")
        fixed = {**_FIXED_ROUTES, no_number_reply(): "no_number"}  # said as the store's shapes are now
        if said in fixed:
            return fixed[said], said
        if said.startswith(_REFUSAL_START):
            return "out_of_scope", said
        answer = next((answer for asked, answer in _ANSWERS if asked() in said), None)
        if answer is None:
            return f"said: {said[:60]}", said
        ours: dict[str, Any] = {"role": "assistant", "content": [{"type": "text", "text": said}]}
        if reply.state is not None and getattr(model, "keeps_state", False):
            ours["state"] = reply.state  # as the turn sends it back
        messages += [ours, _customer(answer)]
    return "kept asking", said


def _tool_route(name: str, arguments: Any) -> str:
    """The route of a tool call: its capability's, with the call's arguments filled in."""
    route = _TOOL_ROUTES.get(name)
    if route is None:
        return f"tool:{name}"
    filled = route.format_map(defaultdict(str, arguments if isinstance(arguments, dict) else {}))
    return _POLICY_ROUTES.get(filled, filled)


def route_policy_topic(route: str) -> str | None:
    """The FAQ topic a route looked up (a demo topic's route or `policy:<topic>`), or None."""
    route = next((looked_up for looked_up, ours in _POLICY_ROUTES.items() if ours == route), route)
    return route.removeprefix(POLICY_ROUTE_PREFIX) if route.startswith(POLICY_ROUTE_PREFIX) else None


@dataclass
class RoutingReport:
    total: Counter
    right: Counter
    misses: list[tuple[str, str, str]]  # text, expected, got

    def share(self, routes) -> float:
        total = sum(self.total[route] for route in routes)
        return sum(self.right[route] for route in routes) / total if total else 1.0

    def shares(self) -> dict[str, float]:
        """The three figures the targets are set for."""
        return {
            "in scope, served": self.share(IN_SCOPE),
            "out of scope, refused or redirected": self.share(["out_of_scope"]),
            "asking for a person": self.share(["person"]),
        }


def routing_evaluate(*, model: Model, system: list[dict], cases: list[dict]) -> RoutingReport:
    report = RoutingReport(Counter(), Counter(), [])
    for case in cases:
        got = message_route(model=model, text=case["text"], system=system)
        report.total[case["route"]] += 1
        if got == case["route"]:
            report.right[case["route"]] += 1
        else:
            report.misses.append((case["text"], case["route"], got))
    return report


def reply_is_dead_end(said: str) -> bool:
    """Whether a customer who asked the store for something is left with nowhere to go (as the turns
    count it, support.assistant.outcomes.reply_leaves_dead_end), or with the offline model's own failure."""
    return said == GENERIC_ERROR_REPLY or reply_leaves_dead_end(said)


@dataclass
class ResolutionReport:
    """Where customers' store requests end after the first answer: served, asked for more, handed or
    offered to a person, or a dead end."""

    total: Counter  # by intent
    dead: Counter
    dead_ends: list[tuple[str, str, str]]  # text, intent, what they read

    def share(self) -> float:
        return sum(self.dead.values()) / sum(self.total.values()) if self.total else 0.0


def resolution_evaluate(*, model: Model, system: list[dict], cases: list[dict]) -> ResolutionReport:
    """The dead ends among store requests ({"text", "intent"} cases), read from each first answer."""
    report = ResolutionReport(Counter(), Counter(), [])
    for case in cases:
        _, said = message_first_answer(model=model, text=case["text"], system=system)
        report.total[case["intent"]] += 1
        if reply_is_dead_end(said):
            report.dead[case["intent"]] += 1
            report.dead_ends.append((case["text"], case["intent"], said))
    return report


def resolution_sets() -> dict[str, list[dict]]:
    """Store requests across everyday support intents ({"text", "intent"}), by set, each written by a
    helper who saw nothing of the model: web.json (360, 24 intents, typed on a website), phone.json (320,
    32 intents, short phone messages)."""
    return {path.stem: json.loads(path.read_text()) for path in sorted(RESOLUTION_SETS.glob("*.json"))}


def routing_sets() -> dict[str, list[dict]]:
    """Every routing set, by name."""
    return {path.stem: json.loads(path.read_text()) for path in sorted(ROUTING_SETS.glob("*.json"))}
