import time

from django.core.management.base import BaseCommand

from support.assistant.builtin.faq import PHRASINGS
from support.assistant.understanding.sentences import phrasings_encode_store, phrasings_texts


class Command(BaseCommand):
    help = (
        "Encode the built-in model's phrasings with the sentence model and store them beside it "
        "(support/assistant/builtin/phrasings.npz); run after editing phrasings.json. About two minutes."
    )

    def handle(self, *args, **options):
        started = time.monotonic()
        texts = phrasings_texts(PHRASINGS)
        path = phrasings_encode_store(texts)
        self.stdout.write(f"{len(texts)} phrasings encoded into {path} in {time.monotonic() - started:.0f} s")
