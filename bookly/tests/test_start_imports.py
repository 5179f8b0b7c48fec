"""What every start of every command pays for (issue 54, "start in seconds"): `manage.py check` and
`manage.py migrate` import no model provider's SDK (anthropic, openai) and no scikit-learn, nor the numpy
and scipy under it. Each costs a quarter of a second to a second at every start of every process (scripts/run
starts several), and only a turn, the built-in model or the unanswered-questions page uses them: they are
imported where they are used, inside the function, never at the top of a module that settings, apps,
models, admin, URLs, views, checks or migrations import."""

import os
import subprocess
import sys

import pytest
from django.conf import settings

pytestmark = pytest.mark.multiprocess

HEAVY = {"anthropic", "openai", "sklearn", "scipy", "numpy"}

# The commands one after another in one process, each as `python manage.py …` runs it (its checks
# included); then every module imported. `migrate --check` exits 1 on a new database: that is its answer.
_COMMANDS = """
import sys

from django.core.management import ManagementUtility

for command in (["check"], ["migrate", "--plan"], ["migrate", "--check"]):
    try:
        ManagementUtility(["manage.py", *command]).execute()
        code = 0
    except SystemExit as stop:
        code = stop.code
    print("EXIT", *command, code)
print("MODULES", *sorted(sys.modules))
"""


def test_check_and_migrate_import_no_model_sdk_and_no_scikit_learn(tmp_path):
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("DJANGO_", "BOOKLY_", "DATABASE_URL", "REDIS_URL"))
    }
    env.update(
        DJANGO_SETTINGS_MODULE="bookly.settings",
        DJANGO_DEBUG="true",
        DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}",
    )
    result = subprocess.run(
        [sys.executable, "-c", _COMMANDS],
        cwd=settings.BASE_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert "EXIT check 0" in lines, result.stdout + result.stderr
    assert "EXIT migrate --plan 0" in lines, result.stdout + result.stderr
    assert any(line.startswith("EXIT migrate --check") for line in lines), result.stdout + result.stderr
    modules = next(line for line in lines if line.startswith("MODULES ")).split()[1:]
    imported = sorted(HEAVY & {module.split(".")[0] for module in modules})
    assert imported == [], (
        f"manage.py check or migrate imports {', '.join(imported)}: import it inside the function that uses "
        f"it (find where with: DJANGO_DEBUG=1 python -X importtime manage.py check)"
    )
