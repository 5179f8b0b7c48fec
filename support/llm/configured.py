"""The model this process talks to, as configured: Claude with a key, an OpenAI-compatible provider
when chosen, else the offline model."""

from functools import lru_cache

from django.conf import settings

from support.llm.chat_completions import ChatCompletionsModel
from support.llm.claude import AnthropicModel
from support.llm.offline import OfflineModel
from support.llm.types import Model


@lru_cache(maxsize=4)
def _build_model(config: tuple) -> Model:
    backend, api_key, model, max_tokens, timeout, max_retries, base_url = config
    if backend == "offline":
        return OfflineModel()
    provider = ChatCompletionsModel if backend == "openai" else AnthropicModel
    return provider(
        api_key=api_key,
        model=model,
        max_tokens=max_tokens,
        timeout=timeout,
        max_retries=max_retries,
        base_url=base_url,
    )


def get_model() -> Model:
    """The model this process talks to: one client per process and configuration."""
    backend = settings.BOOKLY_LLM
    if backend == "auto":
        backend = "anthropic" if settings.ANTHROPIC_API_KEY else "offline"
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
        )
    )
