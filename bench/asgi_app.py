"""ASGI entry point of the benchmark's asyncio alternative (see bench/asgi_alternative.py)."""

import os

from django.core.asgi import get_asgi_application

os.environ["DJANGO_SETTINGS_MODULE"] = "bench.asgi_settings"
application = get_asgi_application()
