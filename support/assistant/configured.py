"""The model this process talks to, as configured: Claude with a key, an OpenAI-compatible provider
when chosen, else the offline model; and the offline model while the provider's circuit is open."""

from collections.abc import Callable
from functools import lru_cache, partial

from django.conf import settings

from support.assistant.builtin.model import OfflineModel
from support.assistant.claims.reader import claim_reader_warm
from support.assistant.prompts import faq_topics_published
from support.insight.metrics import TURNS_ON_FALLBACK
from support.llm.circuit import CircuitRecorded, circuit_lets_turn_through, circuit_open
from support.llm.types import Model

# The built-in model's configuration: it needs none of the providers' settings.
_OFFLINE = ("offline", "", "", 0, 0.0, 0, None, None)


@lru_cache(maxsize=4)
def _build_model(config: tuple) -> Model:
    # Whichever model answers, layer 4 reads every reply's claims: its reader is read now (about a
    # second, once per process), so that no customer waits for it.
    claim_reader_warm()
    backend, api_key, model, max_tokens, timeout, max_retries, base_url, content_format = config
    if backend == "offline":
        return OfflineModel(faq=faq_topics_published)
    # Each provider's SDK is imported when that provider is first used (about a second of a process's
    # start each: manage.py, the task worker and a store with the built-in model never pay it).
    if backend == "openai":
        from support.llm.chat_completions import ChatCompletionsModel

        provider: Callable[..., Model] = partial(ChatCompletionsModel, content_format=content_format)
    else:
        from support.llm.claude import AnthropicModel

        provider = AnthropicModel
    return CircuitRecorded(
        provider(
            api_key=api_key,
            model=model,
            max_tokens=max_tokens,
            timeout=timeout,
            max_retries=max_retries,
            base_url=base_url,
        )
    )


def configured_backend() -> str:
    """Which model answers ("offline", "anthropic", "openai"), without making it (the built-in one trains
    for seconds)."""
    backend = settings.BOOKLY_LLM
    if backend == "auto":
        backend = "anthropic" if settings.ANTHROPIC_API_KEY else "offline"
    return backend


def configured_model() -> Model:
    """The model as configured, whatever its circuit says (for operators' commands)."""
    backend = configured_backend()
    if backend == "openai":
        return _build_model(
            (
                backend,
                # A server of your own may need no key; the SDK wants one all the same.
                settings.OPENAI_API_KEY or "no-key",
                settings.OPENAI_MODEL,
                settings.OPENAI_MAX_TOKENS,
                settings.OPENAI_TIMEOUT_SECONDS,
                settings.OPENAI_MAX_RETRIES,
                settings.OPENAI_BASE_URL or None,
                settings.OPENAI_CONTENT_FORMAT,
            )
        )
    return _build_model(
        (
            backend,
            settings.ANTHROPIC_API_KEY,
            settings.ANTHROPIC_MODEL,
            settings.ANTHROPIC_MAX_TOKENS,
            settings.ANTHROPIC_TIMEOUT_SECONDS,
            settings.ANTHROPIC_MAX_RETRIES,
            settings.ANTHROPIC_BASE_URL or None,
            None,  # Claude takes content blocks, always
        )
    )


def get_model() -> Model:
    """The model that answers now: one client per process and configuration; the built-in model
    while the provider's circuit is open (support.llm.circuit)."""
    model = configured_model()
    if not model.offline and circuit_open():  # None: the circuit's cache failed, so it is closed
        return _build_model(_OFFLINE)
    return model


def model_for_turn() -> Model:
    """The model a turn keeps from its first call to its last: the built-in model (counted) while the
    provider's circuit is open, or while another turn is trying the provider again."""
    model = configured_model()
    if model.offline or circuit_lets_turn_through() is not False:
        return model
    TURNS_ON_FALLBACK.inc()
    return _build_model(_OFFLINE)
