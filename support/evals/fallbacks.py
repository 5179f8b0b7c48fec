"""How often guard layer 4 replaces a model's reply to real customer wording (run_evals --fallbacks).

Each message is a new conversation taken through the real turn (tools, validator, storage), followed by
a second turn that gives a demo order's number and email, so that replies stating order facts are
validated too. A replaced reply is the customer reading the fallback: honest replies replaced are the
validator's false positives, the cost of its rules.
"""

from collections import Counter
from dataclasses import dataclass, field
from importlib import import_module

from django.conf import settings

from support.assistant.turn import conversation_take_turn
from support.llm.types import Model

FOLLOW_UP = "It's BK-10042, sarah.chen@example.com"


@dataclass
class FallbackReport:
    turns: int = 0
    replaced: list[tuple[str, tuple[str, ...]]] = field(default_factory=list)  # (the words, the codes)
    codes: Counter = field(default_factory=Counter)

    def share(self) -> float:
        return len(self.replaced) / self.turns if self.turns else 0.0


def fallback_evaluate(*, model: Model, texts: list[str]) -> FallbackReport:
    """Play each text and the follow-up; count the replies the validator replaced. Needs the demo data."""
    session_store = import_module(settings.SESSION_ENGINE).SessionStore
    report = FallbackReport()
    for text in texts:
        session = session_store()
        session.create()
        for words in (text, FOLLOW_UP):
            result = conversation_take_turn(session=session, text=words, model=model)
            report.turns += 1
            if result.violations:
                report.replaced.append((words, tuple(result.violations)))
                report.codes.update(result.violations)
    return report
