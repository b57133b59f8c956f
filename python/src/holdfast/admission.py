"""Retirement admission, as an acquirer or renewer reads it (docs/protocol.md §5).

One LIST of the branch's retirement records, one GET of each record whose key range covers
the version; the most severe covering state wins. A draining record past its ownership
bound (storage time) counts as open. Unreadable records fail closed: they raise.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, replace
from typing import Literal

from .context import Context
from .errors import HoldfastError
from .layout import parse_retirement_key, retirement_prefix
from .storage_time import is_active_at, storage_now
from .store import list_all

AdmissionState = Literal["open", "draining", "sealed", "committed"]
_SEVERITY: dict[AdmissionState, int] = {"open": 0, "draining": 1, "sealed": 2, "committed": 3}
_STATES = ("draining", "sealed", "committed", "cancelled")


@dataclass(frozen=True)
class RetiringVersion:
    version: int
    manifest_etag: str
    cancelled: bool


@dataclass(frozen=True)
class RetirementRecord:
    """The parts of a schema 1 retirement record admission needs."""

    op_id: str
    owner: str
    branch: str
    state: str
    ownership_bound_ms: int
    versions: tuple[RetiringVersion, ...]


@dataclass(frozen=True)
class Admission:
    state: AdmissionState
    record_key: str | None = None
    record_etag: str | None = None
    reopened: bool = False
    """``open`` only because a committed record, or a cancelled one (it may have been
    committed), names the version cancelled: that cancellation can be newer than a
    finalizer's view of the record, so an acquirer rewrites its lease before returning it
    (docs/protocol.md §5.4). Never set for a version no record names,
    nor for a draining or sealed record (every committed view of it shows its cancellations)."""


def read_admission(
    ctx: Context,
    branch: str,
    version: int,
    *,
    storage_now_ms: int | None = None,
    abort: threading.Event | None = None,
) -> Admission:
    """The admission state of ``(branch, version)``. The caller writes its own object
    first, then calls this (write-then-read): either it sees the drain, or the cleaner's
    census sees its write. A storage-time probe is written only when a draining record
    covers the version and no ``storage_now_ms`` is given."""
    now = storage_now_ms
    result = Admission("open")
    reopened = False
    for meta in list_all(ctx.store, retirement_prefix(branch), abort=abort):
        parts = parse_retirement_key(meta.key)
        if parts is None or parts.branch != branch:
            continue
        if version < parts.min_version or version > parts.max_version:
            continue
        got = ctx.store.get(meta.key, abort=abort)
        if got is None:
            continue  # finalized between list and get
        record = decode_retirement_record(got.body, meta.key)
        entry = next((v for v in record.versions if v.version == version), None)
        if entry is None:
            continue
        if record.state == "cancelled" or entry.cancelled:
            # Cancelled after a commit (cancelReplaced, or the last version's cancellation
            # that made the record cancelled): a finalizer's committed view may not show it.
            if record.state in ("committed", "cancelled"):
                reopened = True
            continue
        state: AdmissionState
        if record.state == "draining":
            state = "draining"
            if now is None:
                now = storage_now(ctx, abort)
            precision = ctx.store.capabilities.timestamp_precision_ms
            if not is_active_at(got.last_modified_ms, record.ownership_bound_ms, precision, now):
                state = "open"  # owner gone past its bound: abandoned, recovery fences it
        elif record.state == "sealed":
            state = "sealed"
        else:
            state = "committed"
        if _SEVERITY[state] > _SEVERITY[result.state]:
            result = Admission(state, meta.key, got.etag)
    if result.state == "open" and reopened:
        return replace(result, reopened=True)
    return result


def decode_retirement_record(body: bytes, key: str) -> RetirementRecord:
    """Bytes that are not JSON are ``invalid-input`` (MALFORMED_OBJECT); JSON of another
    schema is ``unsupported``. Either way the caller fails closed."""
    try:
        value = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as cause:
        raise HoldfastError(
            "invalid-input",
            "get",
            f"retirement record {key} is not JSON",
            key=key,
            code="MALFORMED_OBJECT",
            hint="corrupted or not written by holdfast; retirement fails closed until it is "
            "removed (docs/operations.md)",
            cause=cause,
        ) from cause
    record = _parse_record(value)
    if record is None:
        raise HoldfastError(
            "unsupported",
            "get",
            f"unreadable retirement record {key}",
            key=key,
            hint="written by a newer holdfast or corrupted; retirement fails closed until it is "
            "resolved",
        )
    return record


def _parse_record(value: object) -> RetirementRecord | None:
    if (
        not isinstance(value, dict)
        or value.get("schema") != 1
        or isinstance(value.get("schema"), bool)
    ):
        return None
    strings = [value.get(k) for k in ("opId", "writerId", "owner", "branch")]
    if not all(isinstance(s, str) and s != "" for s in strings):
        return None
    state = value.get("state")
    bound = _integer(value.get("ownershipBoundMs"))
    versions = value.get("versions")
    if state not in _STATES or bound is None or bound <= 0:
        return None
    if not isinstance(versions, list) or not versions:
        return None
    parsed: list[RetiringVersion] = []
    for item in versions:
        if not isinstance(item, dict):
            return None
        number = _integer(item.get("version"))
        etag = item.get("manifestEtag")
        cancelled = item.get("cancelled")
        if number is None or number < 1 or not isinstance(etag, str) or etag == "":
            return None
        if not isinstance(cancelled, bool) or (
            "reason" in item and not isinstance(item["reason"], str)
        ):
            return None
        parsed.append(RetiringVersion(number, etag, cancelled))
    return RetirementRecord(
        op_id=str(value["opId"]),
        owner=str(value["owner"]),
        branch=str(value["branch"]),
        state=str(state),
        ownership_bound_ms=bound,
        versions=tuple(parsed),
    )


def _integer(value: object) -> int | None:
    """A JSON integer as zod's ``z.number().int()`` accepts it (``3`` or ``3.0``, never a bool)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None
