"""The assistant's settings: which model answers customers (Claude, an OpenAI-compatible server or the
built-in model, and the circuit that falls back on the built-in one) and how far a turn and a conversation
may go. bookly/settings.py takes them all (`from bookly.settings_assistant import *`) once it has read
.env; every value comes from the environment (see .env.example)."""

import environ

from support.llm.types import ContentFormat

# The same environment bookly/settings.py reads: the .env it read first is in os.environ already.
env = environ.Env()

# The assistant's model. "auto": Claude when ANTHROPIC_API_KEY is set, else the
# built-in offline model; "offline" forces the offline model; "anthropic" requires a key;
# "openai": any server of the OpenAI Chat Completions API (OPENAI_* below).
BOOKLY_LLM = env.str("BOOKLY_LLM", default="auto")
if BOOKLY_LLM not in ("auto", "offline", "anthropic", "openai"):
    raise SystemExit(f"bookly: BOOKLY_LLM must be auto, offline, anthropic or openai, not {BOOKLY_LLM!r}.")
ANTHROPIC_API_KEY = env.str("ANTHROPIC_API_KEY", default="")
if BOOKLY_LLM == "anthropic" and not ANTHROPIC_API_KEY:
    raise SystemExit("bookly: BOOKLY_LLM=anthropic needs ANTHROPIC_API_KEY.")
# A current Sonnet that the pinned SDK does not list as deprecated (a test checks).
DEFAULT_ANTHROPIC_MODEL = "claude-sonnet-5-5"
ANTHROPIC_MODEL = env.str("ANTHROPIC_MODEL", default=DEFAULT_ANTHROPIC_MODEL)
ANTHROPIC_BASE_URL = env.str("ANTHROPIC_BASE_URL", default="")
ANTHROPIC_MAX_TOKENS = env.int("ANTHROPIC_MAX_TOKENS", default=1024)
ANTHROPIC_TIMEOUT_SECONDS = env.float("ANTHROPIC_TIMEOUT_SECONDS", default=30.0)
ANTHROPIC_MAX_RETRIES = env.int("ANTHROPIC_MAX_RETRIES", default=1)
# An OpenAI-compatible provider: OpenAI itself (a key), or a server of your own at OPENAI_BASE_URL
# (Ollama: http://localhost:11434/v1, vLLM: http://localhost:8000/v1), which may need no key.
OPENAI_API_KEY = env.str("OPENAI_API_KEY", default="")
OPENAI_BASE_URL = env.str("OPENAI_BASE_URL", default="")
OPENAI_MODEL = env.str("OPENAI_MODEL", default="gpt-4o-mini")
OPENAI_MAX_TOKENS = env.int("OPENAI_MAX_TOKENS", default=1024)
OPENAI_TIMEOUT_SECONDS = env.float("OPENAI_TIMEOUT_SECONDS", default=30.0)
OPENAI_MAX_RETRIES = env.int("OPENAI_MAX_RETRIES", default=1)
# How a message's content is sent: "parts" (an array of text parts) or "string" (one string), for servers
# whose chat template does not take arrays; `manage.py assistant --check` says which a server needs.
_content_format = env.str("OPENAI_CONTENT_FORMAT", default=ContentFormat.PARTS.value)
if _content_format not in set(ContentFormat):
    raise SystemExit(
        f"bookly: OPENAI_CONTENT_FORMAT must be {' or '.join(ContentFormat)}, not {_content_format!r}."
    )
OPENAI_CONTENT_FORMAT = ContentFormat(_content_format)

# After this many turns in a row found the provider down, the built-in model answers for this many
# seconds (then the provider is tried again; still down: twice as long, up to ten times).
BOOKLY_MODEL_CIRCUIT_FAILURES = env.int("BOOKLY_MODEL_CIRCUIT_FAILURES", default=3)
BOOKLY_MODEL_CIRCUIT_SECONDS = env.int("BOOKLY_MODEL_CIRCUIT_SECONDS", default=30)
if BOOKLY_LLM == "openai" and not (OPENAI_API_KEY or OPENAI_BASE_URL):
    raise SystemExit(
        "bookly: BOOKLY_LLM=openai needs OPENAI_API_KEY, or OPENAI_BASE_URL for a server of your own."
    )

# Limits of one turn and one conversation.
BOOKLY_MAX_MODEL_CALLS_PER_TURN = env.int("BOOKLY_MAX_MODEL_CALLS_PER_TURN", default=8)
BOOKLY_MAX_TURNS_PER_CONVERSATION = env.int("BOOKLY_MAX_TURNS_PER_CONVERSATION", default=40)
BOOKLY_MAX_MESSAGE_CHARS = env.int("BOOKLY_MAX_MESSAGE_CHARS", default=4000)
# The budget for identity checks (support/assistant/budget.py): tool calls run per model response (the
# rest are answered "not run"), and failed order/email checks per conversation, per browser session and
# per client address within a window (past one, that client's checks stop; from the second failure each
# check waits a delay doubled after each), and per order number (past it, a check of that order also
# needs a one-time code emailed to the order, valid for BOOKLY_CHECK_CODE_MINUTES), counted in the
# default cache (shared by workers with REDIS_URL).
BOOKLY_MAX_TOOL_CALLS_PER_RESPONSE = env.int("BOOKLY_MAX_TOOL_CALLS_PER_RESPONSE", default=8)
BOOKLY_FAILED_CHECKS_PER_ORDER = env.int("BOOKLY_FAILED_CHECKS_PER_ORDER", default=5)
BOOKLY_FAILED_CHECKS_PER_CONVERSATION = env.int("BOOKLY_FAILED_CHECKS_PER_CONVERSATION", default=5)
BOOKLY_FAILED_CHECKS_PER_SESSION = env.int("BOOKLY_FAILED_CHECKS_PER_SESSION", default=10)
BOOKLY_FAILED_CHECKS_PER_IP = env.int("BOOKLY_FAILED_CHECKS_PER_IP", default=20)
BOOKLY_FAILED_CHECK_DELAY_SECONDS = env.float("BOOKLY_FAILED_CHECK_DELAY_SECONDS", default=2.0)
BOOKLY_CHECK_CODE_MINUTES = env.int("BOOKLY_CHECK_CODE_MINUTES", default=15)
BOOKLY_FAILED_CHECKS_WINDOW_MINUTES = env.int("BOOKLY_FAILED_CHECKS_WINDOW_MINUTES", default=60)
# A turn gives up (503, "try again") once this much time has passed, so that
# it always ends inside the server's request timeout (gunicorn: 120 s).
BOOKLY_TURN_DEADLINE_SECONDS = env.float("BOOKLY_TURN_DEADLINE_SECONDS", default=75.0)
# How long a turn holds its conversation at a time. A running turn renews it
# every third of this (support/conversations/lease_keeper.py), so a dead
# worker's conversation is free again within this many seconds.
BOOKLY_TURN_LEASE_SECONDS = env.float("BOOKLY_TURN_LEASE_SECONDS", default=20.0)
BOOKLY_CONVERSATION_IDLE_MINUTES = env.int("BOOKLY_CONVERSATION_IDLE_MINUTES", default=30)
BOOKLY_CONVERSATION_RETENTION_DAYS = env.int("BOOKLY_CONVERSATION_RETENTION_DAYS", default=90)
