import time

from django.core.management.base import BaseCommand

from support.assistant.claims.reader import VECTORS, claim_reader_train_store, labelled_sentences
from support.assistant.understanding.sentences import phrasings_encode_store


class Command(BaseCommand):
    help = (
        "Encode the claim reader's labelled sentences with the sentence model and store them beside them "
        "(support/assistant/claims/sentences/vectors.npz), then train the claim reader on them and keep it "
        "(reader.npz); run after adding or relabelling sentences. A few minutes."
    )

    def handle(self, *args, **options):
        started = time.monotonic()
        rows = labelled_sentences()
        path = phrasings_encode_store(tuple(row.text for row in rows), path=VECTORS)
        self.stdout.write(f"{len(rows)} sentences encoded into {path} in {time.monotonic() - started:.0f} s")
        self.stdout.write(f"the claim reader trained and kept in {claim_reader_train_store()}")
