"""How far this process's Prometheus counters moved, for tests."""

from prometheus_client import REGISTRY


class Counts:
    """Samples of the process's registry, as differences from when this was made."""

    def __init__(self):
        self.before = self._all()

    @staticmethod
    def _all() -> dict:
        return {
            (sample.name, tuple(sorted(sample.labels.items()))): sample.value
            for family in REGISTRY.collect()
            for sample in family.samples
        }

    def moved(self, name: str, **labels) -> float:
        key = (name, tuple(sorted(labels.items())))
        return self._all().get(key, 0) - self.before.get(key, 0)
