"""The product's settings, with the asyncio chat view of bench/asgi_alternative.py routed first."""

from bookly.settings import *  # noqa: F403

ROOT_URLCONF = "bench.asgi_alternative"
