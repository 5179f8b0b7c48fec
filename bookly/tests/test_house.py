"""The house rules a newcomer relies on (docs/contributors.md): modules small enough to read, and one name
for one thing."""

import ast
import re
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
APPS = ("bookly", "connection", "orders", "policies", "store", "support")
MAX_LINES = 600
# How a class or a type alias is named (CapWords), not a constant (UPPER_CASE).
TYPE_NAME = re.compile(r"[A-Z][a-z]\w*")


def _application_modules() -> list[Path]:
    """The apps' Python modules, without their tests and migrations."""
    return [
        path
        for app in APPS
        for path in sorted((ROOT / app).rglob("*.py"))
        if not {"tests", "migrations"} & set(path.relative_to(ROOT).parts)
    ]


def test_no_module_is_longer_than_600_lines():
    long = {
        str(path.relative_to(ROOT)): n
        for path in _application_modules()
        if (n := len(path.read_text().splitlines())) > MAX_LINES
    }
    assert long == {}


def test_no_name_of_a_type_means_two_things():
    """A class or type alias defined in two modules is two things with one name (a management command's
    `Command` is Django's convention, one per command)."""
    where = defaultdict(list)
    for path in _application_modules():
        for node in ast.parse(path.read_text()).body:  # a module's own (not a model's Meta)
            if isinstance(node, ast.ClassDef):
                names = [node.name]
            elif isinstance(node, ast.Assign):
                names = [target.id for target in node.targets if isinstance(target, ast.Name)]
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                names = [node.target.id]
            else:
                continue
            for name in names:
                if TYPE_NAME.fullmatch(name) and name != "Command":
                    where[name].append(str(path.relative_to(ROOT)))
    assert {name: paths for name, paths in where.items() if len(paths) > 1} == {}
