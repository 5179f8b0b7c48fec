from django.conf import settings
from django.core.management.base import BaseCommand

from support.llm.configured import get_model

OFFLINE_HINT = (
    "Assistant: the built-in offline model. Customers are told a simpler assistant is answering. To "
    "connect Claude, set ANTHROPIC_API_KEY in .env (and BOOKLY_LLM to auto or anthropic) and start the "
    "server again."
)


class Command(BaseCommand):
    help = "Say which model answers customers, and how to connect Claude when it is the offline one."

    def handle(self, *args, **options):
        if get_model().offline:
            self.stdout.write(OFFLINE_HINT)
        else:
            self.stdout.write(f"Assistant: Claude ({settings.ANTHROPIC_MODEL}).")
