"""How well the claim reader (support.assistant.claims.reader) reads sentences no one trained it on.

Each writer's sentences are held out in turn: the reader learns from the other writers' and reads these,
so every figure is of sentences written by someone whose sentences it never saw. Per kind of claim and
per language: precision and recall of "it claims this kind" (a claim missed lets a false one through;
a claim read where there is none may replace an honest reply), and of the value read for the claims
found (delivered read as shipped is a miss too).
"""

from collections import defaultdict
from dataclasses import dataclass, field

from support.assistant.claims.reader import KINDS, ClaimReader, labelled_meanings, labelled_sentences


@dataclass
class ClaimCounts:
    """For one kind (and language): sentences that claim it and were read so (with the right value),
    read so but claim nothing of it, and claim it but were read as claiming nothing or another value."""

    right: int = 0
    read_wrongly: int = 0
    missed: int = 0

    @property
    def precision(self) -> float:
        found = self.right + self.read_wrongly
        return self.right / found if found else 1.0

    @property
    def recall(self) -> float:
        claimed = self.right + self.missed
        return self.right / claimed if claimed else 1.0


@dataclass
class HeldOut:
    sentences: int
    writers: list[str]
    by_kind: dict[str, ClaimCounts] = field(default_factory=lambda: defaultdict(ClaimCounts))
    by_kind_language: dict[tuple[str, str], ClaimCounts] = field(
        default_factory=lambda: defaultdict(ClaimCounts)
    )
    errors: list[tuple[str, str, str, str]] = field(default_factory=list)  # text, kind, labelled, read


def claims_held_out(*, sure: float = 0.0) -> HeldOut:
    rows = labelled_sentences()
    meanings = labelled_meanings(rows)
    writers = sorted({row.writer for row in rows})
    report = HeldOut(sentences=len(rows), writers=writers)
    for writer in writers:
        trained = [index for index, row in enumerate(rows) if row.writer != writer]
        held = [index for index, row in enumerate(rows) if row.writer == writer]
        reader = ClaimReader([rows[index] for index in trained], meanings[trained])
        read = reader.read([rows[index].text for index in held], meanings[held], sure=sure)
        for index, claims in zip(held, read, strict=True):
            row = rows[index]
            for kind, choices in KINDS.items():
                labelled, found = row.values[kind], claims.values[kind]
                if labelled == found == choices[0]:
                    continue
                for counts in (report.by_kind[kind], report.by_kind_language[kind, row.lang]):
                    if labelled == found:
                        counts.right += 1
                    elif labelled == choices[0]:
                        counts.read_wrongly += 1
                    else:
                        counts.missed += 1  # not read, or read as another value
                        if found != choices[0]:
                            counts.read_wrongly += 1
                if labelled != found:
                    report.errors.append((row.text, kind, labelled, found))
    return report
