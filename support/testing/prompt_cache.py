"""A simulation of the Messages API prompt cache, to measure what a request layout costs.

Rules simulated: the prefix order is tools, then system, then messages; a
`cache_control` breakpoint writes the prefix up to it (if it is at least the
minimum cacheable length); a later request reads the longest cached prefix it
repeats exactly, looking for it at each breakpoint and at the block
boundaries up to 20 blocks before one (as the API does, which is how a
conversation reads the previous turn's cached history); entries live five
minutes from their last use.
Tokens are estimated as ceil(characters of the canonical JSON / 4), the same
estimate the benchmark of the design Bookly replaces used.
"""

import hashlib
import json
import math
import threading
import time

MIN_CACHEABLE_TOKENS = 1024
LIFETIME_SECONDS = 300
LOOKBACK_BLOCKS = 20


def _canonical(value) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _without_marker(block: dict) -> dict:
    return {key: value for key, value in block.items() if key != "cache_control"}


def _segments(request: dict) -> list[tuple[str, bool | None]]:
    """The request's prefix pieces in cache order, each with whether it carries a breakpoint
    (None for a piece that is not a content block, so not a place the cache can end)."""
    pieces: list[tuple[str, bool | None]] = []
    for tool in request.get("tools") or []:
        pieces.append((_canonical(_without_marker(tool)), "cache_control" in tool))
    system = request.get("system") or []
    if isinstance(system, str):
        system = [{"type": "text", "text": system}]
    for block in system:
        pieces.append((_canonical(_without_marker(block)), "cache_control" in block))
    for message in request.get("messages") or []:
        content = message["content"]
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        pieces.append((_canonical({"role": message["role"]}), None))
        for block in content:
            pieces.append((_canonical(_without_marker(block)), "cache_control" in block))
    return pieces


def estimate_tokens(request: dict) -> int:
    return math.ceil(sum(len(piece) for piece, _ in _segments(request)) / 4)


class PromptCache:
    def __init__(self, *, clock=time.monotonic):
        self._entries: dict[str, float] = {}  # prefix hash -> expiry
        self._clock = clock
        self._lock = threading.Lock()

    def account(self, request: dict) -> dict[str, int]:
        """Usage for this request: uncached input, cache read and cache write tokens."""
        now = self._clock()
        digest = hashlib.sha256()
        chars = 0
        boundaries: list[tuple[str, int]] = []  # (prefix hash, tokens) after each content block
        breakpoints: list[int] = []  # indexes into boundaries
        for piece, is_breakpoint in _segments(request):
            digest.update(piece.encode())
            chars += len(piece)
            if is_breakpoint is None:
                continue
            boundaries.append((digest.copy().hexdigest(), math.ceil(chars / 4)))
            if is_breakpoint:
                breakpoints.append(len(boundaries) - 1)
        total = math.ceil(chars / 4)

        with self._lock:
            self._entries = {key: expiry for key, expiry in self._entries.items() if expiry > now}
            read = 0
            for index in breakpoints:
                for candidate in range(index, max(-1, index - LOOKBACK_BLOCKS - 1), -1):
                    key, tokens = boundaries[candidate]
                    if key in self._entries:
                        self._entries[key] = now + LIFETIME_SECONDS
                        read = max(read, tokens)
                        break
            written_up_to = read
            for index in breakpoints:
                key, tokens = boundaries[index]
                if tokens > read and tokens >= MIN_CACHEABLE_TOKENS:
                    self._entries[key] = now + LIFETIME_SECONDS
                    written_up_to = max(written_up_to, tokens)
        return {
            "input_tokens": total - written_up_to,
            "cache_read_input_tokens": read,
            "cache_creation_input_tokens": written_up_to - read,
        }


def cost_index(usage_rows) -> float:
    """uncached + 1.25 x cache write + 0.1 x cache read, summed over calls."""
    return sum(
        row["input_tokens"] + 1.25 * row["cache_creation_input_tokens"] + 0.1 * row["cache_read_input_tokens"]
        for row in usage_rows
    )
