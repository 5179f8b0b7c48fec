import time

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from support.llm.configured import configured_model
from support.llm.types import ModelFailed, ModelUnavailable

OFFLINE_HINT = (
    "Assistant: the built-in offline model. Customers are told a simpler assistant is answering. To "
    "connect Claude, set ANTHROPIC_API_KEY in .env (and BOOKLY_LLM to auto or anthropic) and start the "
    "server again; for another model, BOOKLY_LLM=openai with OPENAI_BASE_URL and OPENAI_MODEL (README, "
    "'The model')."
)

# One call that only a model able to call tools answers right.
_CHECK_TOOL = {
    "name": "ping",
    "description": "Answers pong. Call it when asked to.",
    "input_schema": {"type": "object", "properties": {}, "additionalProperties": False},
}
_CHECK_MESSAGES = [{"role": "user", "content": [{"type": "text", "text": "Call the ping tool, please."}]}]


class Command(BaseCommand):
    help = (
        "Say which model answers customers (and how to connect one when it is the offline model); with "
        "--check, call it once and say whether it answers and whether it calls tools."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--check", action="store_true", help="Call the model once (costs one small call)."
        )

    def handle(self, *args, check, **options):
        model = configured_model()
        if model.offline:
            self.stdout.write(OFFLINE_HINT)
            return
        where = (
            f", at {settings.OPENAI_BASE_URL}"
            if settings.BOOKLY_LLM == "openai" and settings.OPENAI_BASE_URL
            else ""
        )
        self.stdout.write(f"Assistant: {model.provider} ({model.name}{where}).")
        if not check:
            return
        started = time.monotonic()
        try:
            reply = model.create(
                system=[{"type": "text", "text": "You check a connection."}],
                tools=[_CHECK_TOOL],
                messages=_CHECK_MESSAGES,
                deadline=started + 60,
            )
        except (ModelUnavailable, ModelFailed) as error:
            raise CommandError(f"The model did not answer: {error.reason}.") from None
        took = int((time.monotonic() - started) * 1000)
        self.stdout.write(f"It answers: model {reply.model}, in {took} ms.")
        if not any(block["type"] == "tool_use" and block["name"] == "ping" for block in reply.content):
            raise CommandError(
                "It answered without calling the tool it was asked to call: Bookly needs a model that calls "
                "tools (for vLLM, --enable-auto-tool-choice and a --tool-call-parser)."
            )
        self.stdout.write("It calls tools: yes.")
