"""A cache that refuses every use: what a test without the database gets (see conftest.py).

The PostgreSQL + Redis leg of the suite runs only the tests given the database; a test without it runs
in the SQLite leg alone, so it must not depend on the cache either (in that leg the cache is local
memory, in the other Redis). This backend makes that rule fail loudly instead of silently."""

from django.core.cache.backends.base import BaseCache


class CacheRefused(BaseException):
    """Not an Exception, so that code which survives a cache outage (the model's circuit) cannot hide it."""


class RefusedCache(BaseCache):
    def __init__(self, location, params):
        super().__init__(params)

    def _refuse(self, *args, **kwargs):
        raise CacheRefused(
            "This test has no database, so it runs in the SQLite leg only, where the cache is not Redis: "
            "give it the database (the `db` fixture or `pytest.mark.django_db`) to use the cache."
        )

    add = get = set = touch = delete = has_key = incr = decr = clear = get_many = set_many = _refuse
    delete_many = get_or_set = _refuse
