"""Storage time (docs/protocol.md §3): every expiry is judged on the store's own stamps.

``truncSec``, the precision interval, ``leaseExpiresAt`` and ``isActiveAt`` exactly as the
TypeScript ``@holdfast/protocol`` computes them, on integer milliseconds. Host clocks are
never compared across machines.
"""

from __future__ import annotations

import json
import threading

from .context import Context
from .errors import HoldfastError
from .layout import clock_probe_key

PRECISION_FLOOR_MS = 1000


def trunc_sec(time_ms: int | float) -> int:
    """Truncates a storage timestamp to the whole second (in ms)."""
    return int(time_ms // PRECISION_FLOOR_MS) * PRECISION_FLOOR_MS


def precision_interval_ms(precision_ms: int | float) -> int:
    """``max(p, 1000)`` for a precision of at most a second or a whole number of seconds;
    one more second for any other precision (truncation may move its stamps back a second)."""
    if precision_ms < 0:
        raise HoldfastError(
            "invalid-input", "validate", f"invalid timestamp precision {precision_ms}"
        )
    if precision_ms <= PRECISION_FLOOR_MS:
        return PRECISION_FLOOR_MS
    if precision_ms % PRECISION_FLOOR_MS == 0:
        return int(precision_ms)
    return -(-int(precision_ms) // PRECISION_FLOOR_MS) * PRECISION_FLOOR_MS + PRECISION_FLOOR_MS


def lease_expires_at(last_modified_ms: int, ttl_ms: int, precision_ms: int) -> int:
    """``truncSec(lm) + ttl + interval(p)``: after this storage time the TTL has passed in
    real time (stamp <= real write < truncSec(stamp) + interval). Invariant 1."""
    if ttl_ms < 0:
        raise HoldfastError("invalid-input", "validate", f"invalid TTL {ttl_ms}")
    return trunc_sec(last_modified_ms) + ttl_ms + precision_interval_ms(precision_ms)


def is_active_at(last_modified_ms: int, ttl_ms: int, precision_ms: int, reference_ms: int) -> bool:
    """``leaseExpiresAt(lm, ttl, p) > truncSec(ref)``, ``ref`` being the stamp of an object
    the judge itself wrote. Host clocks never appear (L2, L4)."""
    return lease_expires_at(last_modified_ms, ttl_ms, precision_ms) > trunc_sec(reference_ms)


def encode_json(value: object) -> bytes:
    """The canonical encoding of every control object: ``JSON.stringify`` output + ``\\n``
    (compact separators, keys in insertion order, non-ASCII kept as UTF-8)."""
    return (json.dumps(value, separators=(",", ":"), ensure_ascii=False) + "\n").encode("utf-8")


def storage_now(ctx: Context, abort: threading.Event | None = None) -> int:
    """The store's "now": PUT a probe ``_holdfast/clock/{ulid}``, HEAD it, DELETE it, and
    answer the Last-Modified the store gave it (3 requests)."""
    writer_id = ctx.ids()
    body = encode_json({"schema": 1, "purpose": "storage-time probe", "writerId": writer_id})
    key = clock_probe_key(writer_id)
    # Unconditional: the probe key is fresh, and only its timestamp matters.
    ctx.store.put(key, body, abort=abort)
    meta = ctx.store.head(key, abort=abort)
    try:
        ctx.store.delete(key, abort=abort)
    except HoldfastError:
        pass  # a leftover probe costs nothing but a key; cleanup removes old probes
    if meta is None:
        raise HoldfastError(
            "unsupported",
            "head",
            f"storage-time probe {key} vanished before it could be read",
            key=key,
            hint="the store did not show its own write: it lacks read-after-write consistency",
        )
    return meta.last_modified_ms
