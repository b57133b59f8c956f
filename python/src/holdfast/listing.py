"""Listing leases (what ``listLeases`` and ``lease list`` show), from the listing alone."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass

from .context import Context, as_context
from .errors import HoldfastError
from .layout import LEASES_PREFIX, branch_leases_prefix, parse_lease_key, version_leases_prefix
from .lease import parse_lease_body
from .storage_time import lease_expires_at
from .store import ObjectStore, list_all


@dataclass(frozen=True)
class LeaseEntry:
    """One listed lease object. ``ttl_ms`` and ``expires_at_ms`` (storage time) are filled
    only by ``list_leases(..., read_bodies=True)``."""

    branch: str
    version: int
    lease_id: str
    key: str
    etag: str
    last_modified_ms: int
    size: int
    ttl_ms: int | None = None
    expires_at_ms: int | None = None


def list_leases(
    store: ObjectStore | Context,
    *,
    branch: str | None = None,
    version: int | None = None,
    read_bodies: bool = False,
    abort: threading.Event | None = None,
) -> Iterator[LeaseEntry]:
    """Streams lease objects (all, one branch's, or one version's) in key order; foreign
    keys are skipped. With ``read_bodies`` each lease is read for its TTL (1 GET each; an
    unreadable body leaves ``ttl_ms`` ``None``)."""
    ctx = as_context(store)
    if version is not None and branch is None:
        raise HoldfastError("invalid-input", "list", "a version filter needs a branch")
    if branch is None:
        prefix = LEASES_PREFIX
    elif version is None:
        prefix = branch_leases_prefix(branch)
    else:
        prefix = version_leases_prefix(branch, version)
    precision = ctx.store.capabilities.timestamp_precision_ms
    for meta in list_all(ctx.store, prefix, abort=abort):
        parts = parse_lease_key(meta.key)
        if parts is None:
            continue
        entry = LeaseEntry(
            parts.branch,
            parts.version,
            parts.lease_id,
            meta.key,
            meta.etag,
            meta.last_modified_ms,
            meta.size,
        )
        if read_bodies:
            got = ctx.store.get(meta.key, abort=abort)
            if got is None:
                continue  # released since the listing
            body = parse_lease_body(got.body)
            ttl = body.ttl_ms if body is not None else _schema1_ttl(got.body)
            if ttl is not None:
                entry = LeaseEntry(
                    entry.branch,
                    entry.version,
                    entry.lease_id,
                    entry.key,
                    got.etag,
                    got.last_modified_ms,
                    got.size,
                    ttl,
                    lease_expires_at(got.last_modified_ms, ttl, precision),
                )
        yield entry


def _schema1_ttl(body: bytes) -> int | None:
    """The TTL of a schema 1 body an older release left (it protects until it expires)."""
    import json

    try:
        value = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None
    if not isinstance(value, dict) or value.get("schema") != 1:
        return None
    ttl = value.get("ttlMs")
    return ttl if isinstance(ttl, int) and not isinstance(ttl, bool) else None
