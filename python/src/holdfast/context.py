"""Injected time, identifiers and randomness (the Python side of ``ProtocolContext``).

Leases never compare host clocks across machines: the clock here only drives local timers
(the keeper's renewals and its fence). Tests inject a fake clock, seeded ids and seeded
random bytes so a run replays exactly.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from .errors import HoldfastError
from .store import ObjectStore

Clock = Callable[[], float]
"""Milliseconds since the epoch (local timers only)."""
Ids = Callable[[], str]
"""A fresh ULID per call."""
RandomBytes = Callable[[int], bytes]
"""``n`` fresh random bytes per call (lease secrets)."""
Sleep = Callable[[float, "threading.Event | None"], None]
"""Pauses ``ms`` milliseconds; raises ``aborted`` at once when the event is (or becomes) set."""

CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


def system_clock() -> float:
    """The host's wall clock in ms (what the TypeScript ``systemClock`` reads)."""
    return time.time() * 1000.0


def real_sleep(ms: float, abort: threading.Event | None = None) -> None:
    """Sleeps ``ms``; an abort event cuts the pause short and raises ``aborted``."""
    if abort is None:
        time.sleep(max(0.0, ms) / 1000.0)
        return
    if abort.wait(max(0.0, ms) / 1000.0):
        raise HoldfastError("aborted", "sleep", "pause aborted")


def encode_ulid(time_ms: int, randomness: bytes) -> str:
    """A ULID: 48 bits of milliseconds then 80 random bits, Crockford base32 (26 characters)."""
    if not 0 <= time_ms < 2**48 or len(randomness) != 10:
        raise ValueError("a ULID needs a 48-bit time and 10 random bytes")
    value = (time_ms << 80) | int.from_bytes(randomness, "big")
    return "".join(CROCKFORD[(value >> (5 * (25 - i))) & 31] for i in range(26))


def ulid_ids(clock: Clock = system_clock, random: RandomBytes = os.urandom) -> Ids:
    """Fresh ULIDs from the clock and the random source."""
    return lambda: encode_ulid(int(clock()), random(10))


def seeded_random_bytes(seed: int) -> RandomBytes:
    """Deterministic bytes from a seed, for replayable tests only: xorshift32, the same
    sequence the TypeScript ``seededRandomBytes`` draws for the same seed."""
    state = seed & 0xFFFFFFFF or 1

    def draw(n: int) -> bytes:
        nonlocal state
        out = bytearray(n)
        for i in range(n):
            state ^= (state << 13) & 0xFFFFFFFF
            state ^= state >> 17
            state ^= (state << 5) & 0xFFFFFFFF
            out[i] = state & 0xFF
        return bytes(out)

    return draw


@dataclass(frozen=True)
class ReissuePolicy:
    """How many times an ambiguous answer is re-issued and the pause before each re-issue."""

    pauses_ms: tuple[float, ...] = (200.0, 400.0, 800.0, 1600.0)


DEFAULT_REISSUE_POLICY = ReissuePolicy()


@dataclass(frozen=True)
class Context:
    """A store plus the injected clock, ids, randomness, sleep and re-issue policy."""

    store: ObjectStore
    clock: Clock = system_clock
    ids: Ids = field(default_factory=ulid_ids)
    random: RandomBytes = os.urandom
    sleep: Sleep = real_sleep
    reissue: ReissuePolicy = DEFAULT_REISSUE_POLICY


def as_context(store_or_context: ObjectStore | Context) -> Context:
    """Accepts a bare store (production defaults) or a :class:`Context`."""
    if isinstance(store_or_context, Context):
        return store_or_context
    return Context(store=store_or_context)
