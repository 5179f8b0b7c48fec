import os
import subprocess
import sys

import pytest
from django.conf import settings
from django.core.management import call_command

from orders.models import Order
from policies.models import PolicyEntry


@pytest.mark.django_db
class TestLoadDemoIfEmpty:
    def test_an_empty_store_gets_the_demo(self, capsys):
        call_command("load_demo_if_empty")
        assert Order.objects.filter(number="BK-10042").exists()
        assert PolicyEntry.objects.filter(topic="shipping").exists()
        assert "Loaded the demo: 6 orders" in capsys.readouterr().out

    def test_a_store_with_data_is_left_as_it_is(self, demo_data, capsys):
        PolicyEntry.objects.filter(topic="shipping").update(text="Edited by staff")
        Order.objects.filter(number="BK-9871").delete()
        call_command("load_demo_if_empty")
        assert PolicyEntry.objects.get(topic="shipping").text == "Edited by staff"
        assert not Order.objects.filter(number="BK-9871").exists()
        assert "was not loaded" in capsys.readouterr().out


@pytest.mark.multiprocess
@pytest.mark.slow
def test_a_fresh_database_always_gets_the_demo_on_first_set_up(tmp_path):
    """scripts/run's set-up (migrate, then load_demo_if_empty) on new databases, with unbuffered
    output as many machines set it: the old output-parsing check skipped the demo 2 times in 15."""
    for attempt in range(3):
        database = tmp_path / f"fresh-{attempt}.sqlite3"
        env = {
            **{key: value for key, value in os.environ.items() if not key.startswith("REDIS_URL")},
            "PYTHONUNBUFFERED": "1",
            "DATABASE_URL": f"sqlite:///{database}",
            "DJANGO_SETTINGS_MODULE": "bookly.settings_test",
        }
        for command in (["migrate", "--noinput", "-v0"], ["load_demo_if_empty"]):
            result = subprocess.run(
                [sys.executable, "manage.py", *command],
                cwd=settings.BASE_DIR,
                env=env,
                capture_output=True,
                text=True,
                timeout=120,
            )
            assert result.returncode == 0, result.stderr
        assert "Loaded the demo" in result.stdout
