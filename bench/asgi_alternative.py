"""The serving model Bookly did not choose, built to measure it: asyncio under ASGI.

    bench/run.sh --server asyncio --customers 500 --latency-ms 1000

The issue asked for a choice between threads holding no database connection
while they wait for the model (what Bookly ships: gunicorn gthread workers, the
psycopg pool) and async views calling `AsyncAnthropic` under an ASGI worker.
This module is the second, so that the benchmark can run both against the same
stub, database and load, and the README can compare them by numbers.

It changes only what the choice is about. The turn is the product's own
(`support.services.conversation_turn_steps`: every guard, query and write is
the same); only its driver differs: the model call is awaited with
`AsyncAnthropic` on the worker's event loop, and each stretch of database work
between model calls runs in a thread (`sync_to_async`), as Django's ORM
requires. The view reuses the product view's parsing and answers; the
middleware is the product's, which Django runs in threads under ASGI because it
is synchronous (sessions, CSRF and rate limits all are).

Served by `gunicorn -k uvicorn_worker.UvicornWorker bench.asgi_app:application`
with settings `bench.asgi_settings` (the product's, with this URLconf first).
"""

import asyncio
import os
import time
import weakref

import anthropic
from asgiref.sync import sync_to_async
from django.conf import settings
from django.urls import include, path
from django.views.decorators.csrf import ensure_csrf_cookie
from django.views.decorators.http import require_http_methods

from support import views
from support.llm import AnthropicModel, ModelReply
from support.services import TurnResult, TurnSteps, _release_db_connections, conversation_turn_steps

# Django's default runs every sync_to_async call of a process in one thread; False
# spreads the database work over a thread pool. BENCH_ASYNC_THREAD_SENSITIVE=0 to compare.
THREAD_SENSITIVE = os.environ.get("BENCH_ASYNC_THREAD_SENSITIVE", "1") != "0"


class AsyncAnthropicModel(AnthropicModel):
    """The product's model client (same request, retry rules and reply) on AsyncAnthropic."""

    def __init__(self, *, api_key: str, base_url, **kwargs):
        super().__init__(api_key=api_key, base_url=base_url, **kwargs)
        self.client = anthropic.AsyncAnthropic(
            api_key=api_key, base_url=base_url, max_retries=0, timeout=self.timeout
        )

    async def create(self, *, system, tools, messages, deadline) -> ModelReply:
        attempt = 0
        while True:
            started = time.monotonic()
            try:
                message = await self.client.messages.create(
                    **self._request(system=system, tools=tools, messages=messages, deadline=deadline)
                )
            except (anthropic.APIStatusError, anthropic.APIConnectionError) as error:
                await asyncio.sleep(self._pause_before_retry(error, attempt=attempt, deadline=deadline))
                attempt += 1
            else:
                return self._reply(message, started=started)


# An async HTTP client belongs to the event loop it first ran on: one model per loop
# (a worker has one loop; each async_to_sync call in tests has its own).
_models: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, AsyncAnthropicModel]" = (
    weakref.WeakKeyDictionary()
)


def _async_model() -> AsyncAnthropicModel:
    loop = asyncio.get_running_loop()
    if loop not in _models:
        _models[loop] = AsyncAnthropicModel(
            api_key=settings.ANTHROPIC_API_KEY,
            base_url=settings.ANTHROPIC_BASE_URL or None,
            model=settings.ANTHROPIC_MODEL,
            max_tokens=settings.ANTHROPIC_MAX_TOKENS,
            timeout=settings.ANTHROPIC_TIMEOUT_SECONDS,
            max_retries=settings.ANTHROPIC_MAX_RETRIES,
        )
    return _models[loop]


def _advance(steps: TurnSteps, reply: ModelReply | None = None, error: BaseException | None = None):
    """Run the turn up to its next model call: (request, None), or (None, result) when it is done."""
    try:
        if error is not None:
            request = steps.throw(error)  # the turn cleans up, then re-raises
        elif reply is None:
            request = next(steps)
        else:
            request = steps.send(reply)
    except StopIteration as finished:
        return None, finished.value
    finally:
        # Whatever thread ran this step, it keeps no connection while the turn waits.
        _release_db_connections()
    return request, None


def _close(steps: TurnSteps) -> None:
    """End an abandoned turn: its cleanup releases the lease and stores its model calls."""
    try:
        steps.close()
    except ValueError:  # still running in another thread (thread_sensitive off): it ends itself
        pass
    finally:
        _release_db_connections()


advance = sync_to_async(_advance, thread_sensitive=THREAD_SENSITIVE)
close = sync_to_async(_close, thread_sensitive=THREAD_SENSITIVE)


async def conversation_take_turn_async(*, session, text, model: AsyncAnthropicModel) -> TurnResult:
    steps = conversation_turn_steps(session=session, text=text, offline=False)
    try:
        request, result = await advance(steps)
        while request is not None:
            try:
                reply = await model.create(**request)
            except Exception as error:
                request, result = await advance(steps, error=error)
            else:
                request, result = await advance(steps, reply=reply)
    except BaseException:
        # A customer who hangs up cancels this task at its next await. Left to the garbage
        # collector, the turn would clean up on the event loop, where the ORM refuses to run
        # (seen in the benchmark): end it in a thread, whatever cancels us meanwhile.
        await asyncio.shield(close(steps))
        raise
    return result


@ensure_csrf_cookie
@require_http_methods(["GET", "POST"])
async def chat(request):
    if request.method == "GET":
        return await sync_to_async(views.chat)(request)
    message, refused = await sync_to_async(views.chat_message_of)(request)
    if refused:
        return refused
    try:
        result = await conversation_take_turn_async(
            session=request.session, text=message, model=_async_model()
        )
    except Exception as error:
        return views.chat_turn_refused(error)
    return views.chat_turn_answered(request, result)


urlpatterns = [path("api/chat", chat), path("", include("bookly.urls"))]
