"""The suite's own rules (docs/contributors.md, "Two legs"): which leg a test runs in, and what a test
without the database may touch."""

import pytest
from django.core.cache import cache

from bookly.refused_cache import CacheRefused
from bookly.settings_test import _redis_url_of_this_worker


def test_a_test_without_the_database_runs_in_the_sqlite_leg_only_and_is_refused_the_cache(request):
    assert request.node.get_closest_marker("one_leg") is not None
    with pytest.raises(CacheRefused, match="give it the database"):
        cache.get("circuit")


def test_a_test_given_the_database_runs_in_both_legs_and_has_the_cache(request, db):
    assert request.node.get_closest_marker("one_leg") is None
    cache.set("circuit", "open")
    assert cache.get("circuit") == "open"


@pytest.mark.parametrize(
    ("url", "worker", "own"),
    [
        ("redis://127.0.0.1:6379/1", "gw0", "redis://127.0.0.1:6379/1"),
        ("redis://127.0.0.1:6379/1", "gw2", "redis://127.0.0.1:6379/3"),
        ("redis://:secret@cache:6379", "gw1", "redis://:secret@cache:6379/1"),
    ],
)
def test_each_test_worker_has_a_redis_database_of_its_own(url, worker, own):
    assert _redis_url_of_this_worker(url, worker) == own


def test_more_workers_than_redis_has_databases_stop_with_the_reason():
    with pytest.raises(SystemExit, match="run fewer workers"):
        _redis_url_of_this_worker("redis://127.0.0.1:6379/1", "gw15")
