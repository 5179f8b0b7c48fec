"""Adding a capability by docs/contributors.md's checklist: its module, its tests (and its conversations)
and its entry in the registry, nothing else. A copy of the project gets a throwaway capability made from
the receipt's module (a task asked in words of its own), its tests, a scenario module and its entry in
registry.py; the suite's checks that read every capability (the built-in model's steps, the triggers,
the tools sent, the prompt's cost and words, the docs, its scenario) then pass on it unedited, and the
built-in model and the system prompt take it up."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
CAPABILITIES = Path("support/assistant/capabilities")

# The receipt's module made another capability: what makes it one of its own is renamed, its handler kept.
RENAMED = (
    ('"""Receipts:', '"""Gift notes (a throwaway capability for the checklist\'s test). As receipts:'),
    ('name="receipt"', 'name="gift_note"'),
    ('kind="receipt"', 'kind="gift_note"'),
    ('route="receipt"', 'route="gift_note"'),
    ('scope="an order\'s receipt or invoice (email_receipt)"', 'scope="gift notes (email_gift_note)"'),
    ("email_receipt", "email_gift_note"),
)
GIFT_NOTE_WORDS = 'asks=re.compile(r"\\bgift notes?\\b"),'

# Its tests, beside it.
GIFT_NOTE_TESTS = """
import pytest

from support.assistant.capabilities.registry import TOOL_NAMES, scope_words
from support.assistant.prompts import system_prompt
from support.evals.routing import IN_SCOPE, _tool_route

pytestmark = pytest.mark.usefixtures("demo_data")


def test_the_built_in_model_takes_a_gift_note(offline, customer, django_capture_on_commit_callbacks):
    customer.send("Could I have a gift note for BK-10042?")
    with django_capture_on_commit_callbacks(execute=True):
        told = customer.send("sarah.chen@example.com").json()["reply"]
    assert told == "I've emailed the receipt for order BK-10042 to the email address on the order."


def test_the_models_and_the_evaluations_are_told_of_it():
    assert TOOL_NAMES[-1] == "email_gift_note"
    assert "gift notes (email_gift_note)" in scope_words() and "gift notes" in system_prompt()
    assert _tool_route("email_gift_note", {}) == "gift_note" and "gift_note" in IN_SCOPE
"""

# Its conversations, found by the scenario suite by its name.
GIFT_NOTE_SCENARIOS = """
from support.evals.runner import Exchange, Scenario
from support.evals.scenarios.helpers import SARAH

SCENARIOS = (
    Scenario(
        "gift_note_asked_with_the_number_then_the_email",
        turns=(
            Exchange("Could I have a gift note for BK-10042?", reply_contains=("email",)),
            Exchange(SARAH, reply_contains=("emailed the receipt for order BK-10042",)),
        ),
        tools=(("email_gift_note", {"order_id": "BK-10042", "customer_email": SARAH}),),
    ),
)
"""

# The suite's checks that read every capability (a new one must need no line in them).
CHECKS = (
    "support/tests/assistant/test_builtin_steps.py",
    "support/tests/llm/test_model_boundary.py::test_request_carries_tools_system_and_three_cache_breakpoints",
    "support/tests/assistant/test_prompt_cost.py",
    "support/tests/assistant/test_prompts.py",
    "support/tests/assistant/test_gift_note.py",
    "support/tests/assistant/test_triggers.py",
    "bookly/tests/test_docs.py",
    # Its conversation, with the built-in model answering (the scenario suite finds it by name).
    "support/tests/evals/test_scenarios.py::test_scenario[gift_note_asked_with_the_number_then_the_email-offline]",
)


def _copy_of_the_project(into: Path) -> Path:
    """The project's files as they are now (tracked or new, not ignored), without its virtualenv."""
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.decode()
    for name in filter(None, listed.split("\0")):
        source = ROOT / name
        if source.is_file():
            (into / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, into / name)
    return into


def _add_the_gift_note(project: Path) -> None:
    module = (ROOT / CAPABILITIES / "receipt.py").read_text()
    for old, new in RENAMED:
        assert old in module, old
        module = module.replace(old, new)
    start = module.index("asks=re.compile(")
    module = module[:start] + GIFT_NOTE_WORDS + module[module.index("\n", module.index("))", start)) :]
    (project / CAPABILITIES / "gift_note.py").write_text(module)
    (project / "support/tests/assistant/test_gift_note.py").write_text(GIFT_NOTE_TESTS)
    (project / "support/evals/scenarios/gift_note.py").write_text(GIFT_NOTE_SCENARIOS)

    registry = project / CAPABILITIES / "registry.py"
    listed = registry.read_text()
    assert listed.count("    refunds,\n") == 1 and listed.count("    refunds.CAPABILITY,\n") == 1
    # The registry entry: its import and its place in CAPABILITIES.
    listed = listed.replace("    refunds,\n", "    refunds,\n    gift_note,\n")
    registry.write_text(
        listed.replace("    refunds.CAPABILITY,\n", "    refunds.CAPABILITY,\n    gift_note.CAPABILITY,\n")
    )


@pytest.mark.slow
def test_a_capability_is_its_module_its_tests_and_its_registry_entry(tmp_path):
    project = _copy_of_the_project(tmp_path / "project")
    _add_the_gift_note(project)
    environment = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith(("PYTEST_", "DATABASE_URL", "REDIS_URL", "DJANGO_SETTINGS_MODULE"))
    }
    checked = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:xdist",
            "-p",
            "no:randomly",
            *CHECKS,
        ],
        cwd=project,
        env=environment,
        capture_output=True,
        text=True,
    )
    assert checked.returncode == 0, checked.stdout[-3000:] + checked.stderr[-2000:]
    assert " passed" in checked.stdout and "skipped" not in checked.stdout.splitlines()[-1]
    layers = subprocess.run(
        [str(Path(sys.executable).with_name("lint-imports")), "--no-cache"],
        cwd=project,
        capture_output=True,
        text=True,
    )
    assert layers.returncode == 0, layers.stdout[-2000:]
