"""A Messages-API-compatible model server for load: Bookly's offline model behind a configurable latency.

    .venv/bin/python -m bench.stub_model --port 8801 --latency-ms 1000

`POST /v1/messages` waits `--latency-ms` (asyncio.sleep, so hundreds of calls wait
at once on one thread), then answers with `support.assistant.builtin.model.OfflineModel`,
the project's deterministic rule-based model. Usage is what a process-wide
`support.testing.prompt_cache.PromptCache` bills for the request (prefix match at
each breakpoint, 5-minute lifetime, 1,024-token minimum), plus output tokens
estimated the same way (ceil(characters of canonical JSON / 4)).

`GET /stats` reports the requests served and the stub's own CPU, so the benchmark
can show that the stub is not the bottleneck.
"""

import argparse
import asyncio
import itertools
import json
import math
import os
import resource
import time
from dataclasses import asdict, dataclass

from aiohttp import web

MODEL_NAME = "claude-bench-stub"


@dataclass
class StubStats:
    requests: int = 0
    errors: int = 0
    # CPU spent answering (offline model and cache accounting), excluding the latency sleep.
    work_seconds: float = 0.0
    input_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0
    output_tokens: int = 0

    def add_usage(self, usage: dict[str, int]) -> None:
        for key in (
            "input_tokens",
            "cache_creation_input_tokens",
            "cache_read_input_tokens",
            "output_tokens",
        ):
            setattr(self, key, getattr(self, key) + usage[key])


def load_brain():
    """The offline model and the prompt cache, imported the way the project runs them (Django configured).

    Nothing here touches the database: the offline model decides from the
    messages it is sent.
    """
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "bookly.settings")
    os.environ.setdefault("DJANGO_SECRET_KEY", "bench-stub-not-a-secret")
    # The stub is a model, not the site: whatever the site's environment asks of
    # its own model must not stop Django from starting here.
    os.environ["BOOKLY_LLM"] = "offline"
    import django

    django.setup()
    from support.assistant.builtin.model import OfflineModel
    from support.testing.prompt_cache import PromptCache

    return OfflineModel(), PromptCache()


def estimate_tokens(value) -> int:
    """ceil(characters of the canonical JSON / 4): the estimate the prompt cache uses."""
    return math.ceil(len(json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)) / 4)


def error_response(status: int, error_type: str, message: str) -> web.Response:
    body = {"type": "error", "error": {"type": error_type, "message": message}}
    return web.json_response(body, status=status, headers={"request-id": "req_bench_error"})


class StubModel:
    def __init__(self, *, latency_seconds: float):
        self.latency_seconds = latency_seconds
        self.brain, self.cache = load_brain()
        self.stats = StubStats()
        self._ids = itertools.count(1)

    def answer(self, body: dict) -> dict:
        """The Messages API response the offline model gives to this request body."""
        reply = self.brain.create(
            system=body.get("system") or [],
            tools=body.get("tools") or [],
            messages=body["messages"],
            deadline=time.monotonic() + 60,
        )
        usage = self.cache.account(body)
        usage["output_tokens"] = estimate_tokens(reply.content)
        return {
            "id": f"msg_bench_{next(self._ids):08d}",
            "type": "message",
            "role": "assistant",
            "model": body.get("model") or MODEL_NAME,
            "content": reply.content,
            "stop_reason": reply.stop_reason,
            "stop_sequence": None,
            "usage": usage,
        }

    async def messages(self, request: web.Request) -> web.Response:
        self.stats.requests += 1
        try:
            body = await request.json()
        except ValueError:
            self.stats.errors += 1
            return error_response(400, "invalid_request_error", "body is not JSON")
        if self.latency_seconds:
            await asyncio.sleep(self.latency_seconds)
        started = time.process_time()
        try:
            payload = self.answer(body)
        except Exception as error:  # a bench must report, not die
            self.stats.errors += 1
            return error_response(500, "api_error", f"stub failed: {type(error).__name__}")
        finally:
            self.stats.work_seconds += time.process_time() - started
        self.stats.add_usage(payload["usage"])
        return web.json_response(payload, headers={"request-id": f"req_{payload['id']}"})

    async def stats_view(self, request: web.Request) -> web.Response:
        usage = resource.getrusage(resource.RUSAGE_SELF)
        return web.json_response(
            {
                **asdict(self.stats),
                "cpu_seconds": usage.ru_utime + usage.ru_stime,
                "max_rss_kib": usage.ru_maxrss,
                "latency_ms": self.latency_seconds * 1000,
            }
        )

    def app(self) -> web.Application:
        app = web.Application(client_max_size=64 * 1024**2)
        app.router.add_post("/v1/messages", self.messages)
        app.router.add_get("/stats", self.stats_view)
        return app


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8801)
    parser.add_argument("--latency-ms", type=float, default=1000.0, help="time each model call takes")
    args = parser.parse_args()
    if args.host not in ("127.0.0.1", "localhost", "::1"):
        parser.error("the stub serves loopback only")
    stub = StubModel(latency_seconds=args.latency_ms / 1000)
    web.run_app(
        stub.app(),
        host=args.host,
        port=args.port,
        access_log=None,
        backlog=2048,
        print=None,
        shutdown_timeout=1,
    )


if __name__ == "__main__":
    main()
