import time
from typing import TYPE_CHECKING

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from support.assistant.configured import configured_backend, configured_model
from support.llm.types import ContentFormat, ModelFailed, ModelUnavailable

if TYPE_CHECKING:
    from support.llm.chat_completions import ChatCompletionsModel

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
        "--check, call it and say whether it answers, whether it calls tools and (OpenAI-compatible) "
        "whether it needs OPENAI_CONTENT_FORMAT=string."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--check",
            action="store_true",
            help="Call the model (one small call; one or two more for an OpenAI-compatible one).",
        )

    def handle(self, *args, check, **options):
        # Said without making the built-in model: scripts/run asks on every start, and its server makes it.
        if configured_backend() == "offline":
            self.stdout.write(OFFLINE_HINT)
            return
        model = configured_model()
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
        problems = []
        if any(block["type"] == "tool_use" and block["name"] == "ping" for block in reply.content):
            self.stdout.write("It calls tools: yes.")
        else:
            problems.append(
                "It answered without calling the tool it was asked to call: Bookly needs a model that calls "
                "tools (for vLLM, --enable-auto-tool-choice and a --tool-call-parser)."
            )
        # The content format is asked even of a model that called no tool: both may need changing.
        # Imported here: the OpenAI SDK takes a quarter of a second to load, which only --check needs.
        from support.llm.chat_completions import ChatCompletionsModel

        provider = getattr(model, "inner", model)
        if isinstance(provider, ChatCompletionsModel):
            said, wrong = self._content_format(provider, deadline=time.monotonic() + 60)
            if wrong:
                problems.append(said)
            else:
                self.stdout.write(said)
        if problems:
            raise CommandError("\n".join(problems))

    def _content_format(self, model: "ChatCompletionsModel", *, deadline: float) -> tuple[str, bool]:
        """One line on how this server needs messages sent, and whether the setting is wrong for it."""
        from support.llm.chat_completions import content_format_needed

        try:
            finding = content_format_needed(model, deadline=deadline)
        except (ModelUnavailable, ModelFailed) as error:
            return f"Content format: the model did not answer the probe: {error.reason}.", True
        current = ContentFormat(model.content_format)
        if finding.needed is None:
            return (
                f"Content format: {finding.why}; no setting cures that: choose another model or chat "
                "template (llama.cpp's server: --chat_format).",
                True,
            )
        if finding.needed == ContentFormat.STRING and current != ContentFormat.STRING:
            return (
                f"Content format: {finding.why}: set OPENAI_CONTENT_FORMAT=string and start the server "
                "again.",
                True,
            )
        if finding.needed == current:
            return f"Content format: OPENAI_CONTENT_FORMAT={current} is right: {finding.why}.", False
        return (
            f"Content format: {finding.why}, so OPENAI_CONTENT_FORMAT=string works but is not needed "
            "(parts, the default, keeps the turn's reminder a block of its own).",
            False,
        )
