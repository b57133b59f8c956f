"""Reader leases on a version, straight on the store (docs/protocol.md §4).

The same protocol, keys and bytes as ``@holdfast/leases``:

* acquire: create-only PUT of a fresh lease key, THEN read retirement admission, THEN (off
  ``main``) HEAD the branch's deletion fence, THEN HEAD the manifest. A lease that lost any
  of these races is deleted and the acquire raises (write-then-read; invariant 1). Admitted
  only because a committed (or cancelled) record shows the version cancelled, it rewrites
  its lease once (if-match) before returning it;
* renew: if-match PUT on the handle's ETag (a conflict adopts a stored body only if it is a
  later write of this very handle: its proof verifies under the secret), THEN admission;
* release: if-match DELETE on the handle's ETag where the store honours it, else an
  unconditional DELETE of the checked key, which names only the lease whose secret the
  caller holds.

Every write goes through the resolver (:mod:`holdfast.resolve`): an answer that was lost is
settled by re-issue and read-back, never reported as success or failure without proof.
"""

from __future__ import annotations

import json
import math
import threading
from dataclasses import dataclass, field, replace
from datetime import timedelta
from typing import Any

from .admission import AdmissionState, read_admission
from .context import Context, as_context
from .errors import HoldfastError
from .layout import (
    DEFAULT_BRANCH,
    MAX_SAFE_INTEGER,
    branch_fence_key,
    is_ulid,
    is_valid_name,
    lease_key,
    manifest_key,
    parse_lease_key,
    validate_name,
    validate_version,
)
from .resolve import (
    Applied,
    ResolveOptions,
    delete_if_match,
    delete_if_match_read,
    put_if_absent,
    put_if_match,
)
from .secret import (
    decode_lease_secret,
    draw_lease_secret,
    lease_proof,
    lease_tag,
    verify_lease_proof,
)
from .storage_time import encode_json
from .store import ObjectStore

MIN_TTL_MS = 100
"""Shortest accepted TTL: sub-second TTLs are safe because expiry adds a whole second (L4)."""
MAX_TTL_MS = 24 * 60 * 60 * 1000
"""Longest accepted TTL, part of the protocol: a census treats older lease objects as expired."""
INVALID_LEASE_HANDLE = "INVALID_LEASE_HANDLE"
LEASE_SCHEMA = 2


@dataclass(frozen=True)
class Lease:
    """A lease this process holds. Its ``secret`` is the capability: whoever holds the
    handle can renew and release the lease, nobody else can. Keep it out of logs
    (``repr`` hides it)."""

    lease_id: str
    branch: str
    version: int
    ttl_ms: int
    secret: str = field(repr=False)
    key: str
    etag: str
    """ETag of the last write: the next renewal is an if-match on it."""
    renewal: int
    writer_id: str
    written_at_local_ms: float
    """Local clock just before the last successful write was sent: the lease protects its
    version at least until ``written_at_local_ms + ttl_ms`` of this clock's time."""
    manifest_key: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The handle in the TypeScript ``Lease`` shape (camelCase), for other processes."""
        out: dict[str, Any] = {
            "leaseId": self.lease_id,
            "branch": self.branch,
            "version": self.version,
            "ttlMs": self.ttl_ms,
            "secret": self.secret,
            "key": self.key,
            "etag": self.etag,
            "renewal": self.renewal,
            "writerId": self.writer_id,
            "writtenAtLocalMs": self.written_at_local_ms,
        }
        if self.manifest_key is not None:
            out["manifestKey"] = self.manifest_key
        return out

    @staticmethod
    def from_dict(value: object) -> Lease:
        """A handle from its TypeScript shape (as ``acquireLease`` returns it), checked
        exactly as ``validateLeaseHandle`` checks it."""
        if not isinstance(value, dict):
            raise _bad_handle("from_dict", None, "not an object")
        raw_key = value.get("key")
        key = raw_key if isinstance(raw_key, str) else None
        fields = {
            "lease_id": value.get("leaseId"),
            "branch": value.get("branch"),
            "version": value.get("version"),
            "ttl_ms": value.get("ttlMs"),
            "secret": value.get("secret"),
            "key": raw_key,
            "etag": value.get("etag"),
            "renewal": value.get("renewal"),
            "writer_id": value.get("writerId"),
            "written_at_local_ms": value.get("writtenAtLocalMs"),
            "manifest_key": value.get("manifestKey"),
        }
        for name in ("version", "ttl_ms", "renewal"):
            number = fields[name]
            if isinstance(number, float) and number.is_integer():
                fields[name] = int(number)
        try:
            lease = Lease(**fields)  # type: ignore[arg-type]
        except TypeError as error:
            raise _bad_handle("from_dict", key, str(error)) from error
        return validate_lease_handle(lease, "from_dict")


@dataclass(frozen=True)
class LeaseBody:
    """A schema 2 lease body, fields in the order the protocol fixes."""

    lease_id: str
    branch: str
    version: int
    ttl_ms: int
    renewal: int
    writer_id: str
    proof: str
    holder: str | None = None
    """The holder label the reader gave (a TypeScript or HTTP ``holder``), when the body has one."""


def encode_lease_body(
    secret: str,
    *,
    lease_id: str,
    branch: str,
    version: int,
    ttl_ms: int,
    renewal: int,
    writer_id: str,
    holder: str | None = None,
) -> bytes:
    """``JSON.stringify`` of schema, leaseId, branch, version, ttlMs, renewal, writerId,
    proof (in that order), then ``holder`` when given, + ``\\n``: byte for byte what the
    TypeScript leases write."""
    body: dict[str, Any] = {
        "schema": LEASE_SCHEMA,
        "leaseId": lease_id,
        "branch": branch,
        "version": version,
        "ttlMs": ttl_ms,
        "renewal": renewal,
        "writerId": writer_id,
        "proof": lease_proof(secret, lease_id, renewal, writer_id),
    }
    if holder is not None:
        body["holder"] = holder
    return encode_json(body)


def parse_lease_body(body: bytes) -> LeaseBody | None:
    """A schema 2 body, or ``None`` for anything else (unknown fields are ignored)."""
    try:
        value = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None
    if not isinstance(value, dict):
        return None
    schema, version = _int(value.get("schema")), _int(value.get("version"))
    ttl_ms, renewal = _int(value.get("ttlMs")), _int(value.get("renewal"))
    lease_id, writer_id = value.get("leaseId"), value.get("writerId")
    branch, proof = value.get("branch"), value.get("proof")
    if schema != LEASE_SCHEMA or not is_ulid(lease_id) or not is_ulid(writer_id):
        return None
    if not is_valid_name(branch) or version is None or not 1 <= version <= MAX_SAFE_INTEGER:
        return None
    if ttl_ms is None or not MIN_TTL_MS <= ttl_ms <= MAX_TTL_MS:
        return None
    if renewal is None or not 0 <= renewal <= MAX_SAFE_INTEGER:
        return None
    if (
        not isinstance(proof, str)
        or len(proof) != 64
        or any(c not in "0123456789abcdef" for c in proof)
    ):
        return None
    assert isinstance(lease_id, str)
    assert isinstance(writer_id, str)
    assert isinstance(branch, str)
    holder = value.get("holder")
    return LeaseBody(
        lease_id,
        branch,
        version,
        ttl_ms,
        renewal,
        writer_id,
        proof,
        holder if isinstance(holder, str) else None,
    )


def ttl_to_ms(ttl: float | timedelta | None, ttl_ms: int | None, operation: str = "acquire") -> int:
    """The TTL in whole ms, MIN_TTL_MS..MAX_TTL_MS (``ttl`` in seconds, or ``ttl_ms``)."""
    if (ttl is None) == (ttl_ms is None):
        raise _invalid_ttl(operation, "give exactly one of ttl (seconds) and ttl_ms")
    if ttl is not None:
        if isinstance(ttl, timedelta):
            ms = ttl / timedelta(milliseconds=1)
        elif isinstance(ttl, int | float) and not isinstance(ttl, bool):
            ms = float(ttl) * 1000.0
        else:
            raise _invalid_ttl(operation, f"invalid TTL {ttl!r}")
        if not math.isfinite(ms) or abs(ms - round(ms)) > 1e-6:
            raise _invalid_ttl(operation, f"invalid TTL {ttl!r}: not a whole number of ms")
        candidate: object = round(ms)
    else:
        candidate = ttl_ms
    if (
        not isinstance(candidate, int)
        or isinstance(candidate, bool)
        or not MIN_TTL_MS <= candidate <= MAX_TTL_MS
    ):
        raise _invalid_ttl(
            operation,
            f"invalid TTL {candidate!r}: must be an integer from {MIN_TTL_MS} to {MAX_TTL_MS} ms",
        )
    return candidate


def acquire(
    store: ObjectStore | Context,
    *,
    version: int,
    ttl: float | timedelta | None = None,
    ttl_ms: int | None = None,
    branch: str = DEFAULT_BRANCH,
    manifest: str | None = None,
    manifest_etag: str | None = None,
    abort: threading.Event | None = None,
) -> Lease:
    """Acquires a lease on an existing version (docs/protocol.md §4, Acquire 1-6; 3 requests on
    ``main`` when no cleanup is in flight, 4 elsewhere). Raises ``refused`` (RETIRING, SEALED,
    COMMITTED, BRANCH_DELETING) or ``not-found`` (VERSION_NOT_FOUND) after removing its own
    lease when it lost a race with a cleaner or a branch deletion. ``manifest`` names the key
    that proves the version exists (default: the holdfast format's manifest); with
    ``manifest_etag`` (the ETag of the manifest the caller read and checked before), the
    manifest found after the write must still be that object, else the lease is removed and the
    acquire raises ``conflict`` (MANIFEST_CHANGED). Admitted only because a committed (or
    cancelled) record shows the version cancelled, it rewrites its lease (if-match, fresh bytes;
    +1 PUT) before returning it, so no finalizer holding an older view of that record can delete
    it; a lease gone before that rewrite raises ``not-found`` (LEASE_LOST). Invariant 1."""
    ctx = as_context(store)
    # Acquire 1 check.
    branch = validate_name(branch)
    version = validate_version(version)
    ms = ttl_to_ms(ttl, ttl_ms)
    proof_key = manifest if manifest is not None else manifest_key(branch, version)

    lease_id = ctx.ids()
    secret = draw_lease_secret(ctx.random)
    key = lease_key(branch, version, lease_id, lease_tag(secret))
    writer_id = ctx.ids()
    body = encode_lease_body(
        secret,
        lease_id=lease_id,
        branch=branch,
        version=version,
        ttl_ms=ms,
        renewal=0,
        writer_id=writer_id,
    )
    written_at = ctx.clock()
    try:
        # Acquire 2 write.
        outcome = put_if_absent(ctx.store, key, body, _resolve(ctx, abort))
    except HoldfastError as error:
        # An unknown outcome may have left a lease behind: remove it (best effort; a
        # leftover only protects the version until its TTL passes).
        if error.kind == "unresolved":
            _remove_quietly(ctx, key)
        raise
    if not isinstance(outcome, Applied):
        raise HoldfastError(
            "conflict",
            "acquire",
            f"lease key {key} already taken",
            key=key,
            hint="the id source produced a duplicate id",
        )
    etag = outcome.etag

    try:
        # Acquire 3 admission, after the write (write-then-read against the cleaner's drain).
        admission = read_admission(ctx, branch, version, abort=abort)
    except HoldfastError:
        _remove_quietly(ctx, key)
        raise
    state = admission.state
    if state != "open":
        # We lost the race with a cleaner: its census may not count us, so we must not claim
        # protection. Removing our lease lets the cleaner proceed without retaining for us.
        _remove_quietly(ctx, key)
        raise _refusal("acquire", branch, version, state, key)
    if branch != DEFAULT_BRANCH:
        # Acquire 4 fence. A branch deletion that has begun (its fence is written) tears the branch
        # down.
        try:
            fence = ctx.store.head(branch_fence_key(branch), abort=abort)
        except HoldfastError:
            _remove_quietly(ctx, key)
            raise
        if fence is not None:
            _remove_quietly(ctx, key)
            raise HoldfastError(
                "refused",
                "acquire",
                f"branch {branch} is being deleted; no new leases on it",
                key=branch_fence_key(branch),
                code="BRANCH_DELETING",
                hint="read another branch; run holdfast recover if a deletion was interrupted",
            )
    # Acquire 5 manifest, read after the lease write: a retirement that finished entirely before
    # the write leaves no record, so only a later manifest read proves the version outlives it.
    try:
        found = ctx.store.head(proof_key, abort=abort)
    except HoldfastError:
        _remove_quietly(ctx, key)
        raise
    if found is None:
        _remove_quietly(ctx, key)
        raise HoldfastError(
            "not-found",
            "acquire",
            f"version {version} of branch {branch} does not exist",
            key=proof_key,
            code="VERSION_NOT_FOUND",
        )
    if manifest_etag is not None and found.etag != manifest_etag:
        # Another object now stands at the manifest key (the version was retired and
        # written again): what the caller checked is not what the lease protects.
        _remove_quietly(ctx, key)
        raise HoldfastError(
            "conflict",
            "acquire",
            f"the manifest {proof_key} changed after it was read",
            key=proof_key,
            code="MANIFEST_CHANGED",
            hint="read the version again",
        )
    lease = Lease(
        lease_id=lease_id,
        branch=branch,
        version=version,
        ttl_ms=ms,
        secret=secret,
        key=key,
        etag=etag,
        renewal=0,
        writer_id=writer_id,
        written_at_local_ms=written_at,
        manifest_key=proof_key,
    )
    if not admission.reopened:
        return lease
    # Acquire 6 rewrite. Admitted only because a committed (or cancelled) record shows the version
    # cancelled. A finalizer whose view of that record predates the cancellation deletes leases
    # written before its view, and our PUT may be one (an acquire stalled across the commit and the
    # cancellation). Rewriting after the read that saw the cancellation stamps the lease after it,
    # hence a whole precision interval past any such view (docs/protocol.md §3, §5.4). 1 PUT, only
    # here.
    rewritten_at = ctx.clock()
    try:
        new_etag, renewal, new_writer = _write_next(ctx, lease, abort, "acquire")
    except HoldfastError:
        # Gone (a finalizer deleted it) or unknown: the lease may not outlive that view.
        _remove_quietly(ctx, key)
        raise
    return replace(
        lease,
        etag=new_etag,
        renewal=renewal,
        writer_id=new_writer,
        written_at_local_ms=rewritten_at,
    )


def renew(
    store: ObjectStore | Context, lease: Lease, *, abort: threading.Event | None = None
) -> Lease:
    """Renews a lease (docs/protocol.md §4, Renew 1-4): if-match rewrite (fresh writerId, next
    renewal, fresh proof), THEN admission. Succeeds while the version is open or draining (L1);
    from sealed on raises ``refused`` (SEALED/COMMITTED) and protection ends at the previous
    expiry. A lease that is gone or not this handle's any more raises ``not-found``
    (LEASE_LOST); one whose TTL ran out on the local clock is refused (LEASE_EXPIRED) without a
    write."""
    ctx = as_context(store)
    validate_lease_handle(lease, "renew")  # Renew 1 check
    # An expired lease is never rewritten: a sweep may be deleting it, and the holder's
    # protection has already lapsed by its own clock.
    if ctx.clock() >= lease.written_at_local_ms + lease.ttl_ms:
        raise HoldfastError(
            "refused",
            "renew",
            f"lease {lease.lease_id} expired before it was renewed",
            key=lease.key,
            code="LEASE_EXPIRED",
            hint="acquire a new lease, then re-read the manifest",
        )
    written_at = ctx.clock()
    etag, renewal, writer_id = _write_next(ctx, lease, abort, "renew")  # Renew 2 write
    # Renew 3 admission.
    admission = read_admission(ctx, lease.branch, lease.version, abort=abort)
    if admission.state in ("sealed", "committed"):
        raise _refusal("renew", lease.branch, lease.version, admission.state, lease.key)
    if admission.reopened:
        # Renew 4 rewrite. Admitted only because a committed (or cancelled) record names
        # the version cancelled: the write above may be older than a finalizer's view that
        # lacks the cancellation, so write once more after the read that saw it
        # (docs/protocol.md §5.4, *A stalled renewal*). 1 PUT, only here.
        written = replace(lease, etag=etag, renewal=renewal, writer_id=writer_id)
        etag, renewal, writer_id = _write_next(ctx, written, abort, "renew")
    if ctx.clock() >= lease.written_at_local_ms + lease.ttl_ms:
        # The previous term ran out while this renewal was in flight, so a cleaner may have
        # counted the lease as expired and finished a whole retirement before our admission
        # read (which then sees no record): only the manifest proves the version still exists.
        proof_key = lease.manifest_key or manifest_key(lease.branch, lease.version)
        if ctx.store.head(proof_key, abort=abort) is None:
            _remove_quietly(ctx, lease.key)
            raise HoldfastError(
                "not-found",
                "renew",
                f"version {lease.version} of branch {lease.branch} was retired during the renewal",
                key=proof_key,
                code="VERSION_NOT_FOUND",
                hint="the lease lapsed before its renewal landed",
            )
    return replace(
        lease,
        etag=etag,
        renewal=renewal,
        writer_id=writer_id,
        written_at_local_ms=written_at,
    )


def _write_next(
    ctx: Context, lease: Lease, abort: threading.Event | None, operation: str
) -> tuple[str, int, str]:
    """The next write of a handle's lease: if-match on its ETag with fresh bytes (renewal
    + 1). A conflict adopts the stored object only when it is a later write of this very
    handle whose answer was lost, and writes once more on its ETag; anything else raises
    ``not-found`` (LEASE_LOST). Returns (etag, renewal, writer_id). Renewals and a reopened
    acquire share it."""
    renewal = lease.renewal + 1
    writer_id = ctx.ids()
    body = _body_for(lease, renewal, writer_id)
    expected = lease.etag
    outcome = put_if_match(ctx.store, lease.key, body, expected, _resolve(ctx, abort))
    if not isinstance(outcome, Applied):
        # Adopt what is there only if it is a later write of this very handle whose answer
        # was lost (its proof verifies under our secret and it counts past our renewal);
        # anything else (gone, rewritten without the secret, an older body put back) means
        # the lease is not ours any more.
        # Every conflict is read back by the resolver: what it found is handed over.
        current = outcome.current
        adopted = None if current is None else later_own_write(current.body, lease)
        if current is not None and adopted is not None:
            expected = current.etag
            renewal = adopted.renewal + 1
            writer_id = ctx.ids()
            body = _body_for(lease, renewal, writer_id)
            outcome = put_if_match(ctx.store, lease.key, body, expected, _resolve(ctx, abort))
    if not isinstance(outcome, Applied):
        raise HoldfastError(
            "not-found",
            operation,
            f"lease {lease.lease_id} is gone or was rewritten by another writer",
            key=lease.key,
            code="LEASE_LOST",
            hint="a finalizer removed it while the acquire was in flight; acquire again"
            if operation == "acquire"
            else "the version may have been retired or its branch deleted; acquire a new lease",
        )
    return outcome.etag, renewal, writer_id


def release(store: ObjectStore | Context, lease: Lease) -> None:
    """Releases a lease (docs/protocol.md §4, Release 1-2): deletes its object, and only it. Where
    the store honours conditional DELETE the delete is if-match on the handle's ETag; a mismatch
    is settled by reading the object: a later write of this handle (an own renewal whose answer
    was lost) is deleted at its ETag, anything else is left alone (``conflict``, LEASE_LOST).
    Elsewhere (RGW) the delete is unconditional on the checked key. Idempotent."""
    ctx = as_context(store)
    validate_lease_handle(lease, "release")  # Release 1 check; then Release 2 delete
    if not ctx.store.capabilities.atomic_conditional_delete:
        ctx.store.delete(lease.key)
        return
    status, current = delete_if_match_read(ctx.store, lease.key, lease.etag, _resolve(ctx, None))
    if status == "applied" or current is None:
        return
    if (
        later_own_write(current.body, lease) is not None
        and delete_if_match(ctx.store, lease.key, current.etag, _resolve(ctx, None)) == "applied"
    ):
        return
    raise HoldfastError(
        "conflict",
        "release",
        f"{lease.key} is not this lease any more",
        key=lease.key,
        code="LEASE_LOST",
    )


def later_own_write(body: bytes, lease: Lease) -> LeaseBody | None:
    """The body of a write this handle made after its own last one, or ``None``: it must
    name this lease, its proof must verify under the handle's secret, and its renewal must
    be past the handle's."""
    stored = parse_lease_body(body)
    if stored is None:
        return None
    mine = (
        stored.lease_id == lease.lease_id
        and stored.branch == lease.branch
        and stored.version == lease.version
        and stored.renewal > lease.renewal
        and verify_lease_proof(
            lease.secret, stored.lease_id, stored.renewal, stored.writer_id, stored.proof
        )
    )
    return stored if mine else None


def validate_lease_handle(lease: object, operation: str) -> Lease:
    """Checks a handle before any request (docs/protocol.md §4.1): its key
    must be exactly the lease key of its branch, version, leaseId and secret (the key's
    tag is the secret's hash), with the ETag of its last write, so renew and release can
    only ever touch the one lease object whose secret the caller holds (invariant 6)."""
    key = getattr(lease, "key", None)
    shown = key if isinstance(key, str) else None
    if not isinstance(lease, Lease):
        raise _bad_handle(operation, shown, "not a Lease")
    if not isinstance(lease.key, str):
        raise _bad_handle(operation, None, "key is not a string")
    parsed = parse_lease_key(lease.key)
    if parsed is None:
        raise _bad_handle(operation, shown, f"{lease.key} is not a lease key")
    if not is_ulid(lease.lease_id):
        raise _bad_handle(operation, shown, "leaseId is not a ULID")
    if parsed.tag is None:
        raise HoldfastError(
            "invalid-input",
            operation,
            f"lease {lease.lease_id} was taken by a release before lease schema 2 and has no "
            "secret: it cannot be renewed or released",
            key=lease.key,
            code=INVALID_LEASE_HANDLE,
            hint="acquire a new lease; the old one protects its version until its TTL passes "
            "and a sweep removes it",
        )
    if decode_lease_secret(lease.secret) is None:
        raise _bad_handle(
            operation, shown, "secret is not 43 characters of canonical base64url (32 bytes)"
        )
    if (
        parsed.branch != lease.branch
        or parsed.version != lease.version
        or parsed.lease_id != lease.lease_id
    ):
        raise _bad_handle(
            operation,
            shown,
            f"key {lease.key} does not belong to lease {lease.lease_id} of "
            f"{lease.branch}@{lease.version}",
        )
    # Re-derive the key from the secret: a handle whose secret is not the one the lease was
    # acquired with names no lease (its tag differs), so it is refused before any request.
    if (
        lease_key(parsed.branch, parsed.version, parsed.lease_id, lease_tag(lease.secret))
        != lease.key
    ):
        raise _bad_handle(operation, shown, "key is not the lease key of this handle's secret")
    if not isinstance(lease.etag, str) or lease.etag == "":
        raise _bad_handle(operation, shown, "etag is missing")
    if (
        not isinstance(lease.ttl_ms, int)
        or isinstance(lease.ttl_ms, bool)
        or not MIN_TTL_MS <= lease.ttl_ms <= MAX_TTL_MS
    ):
        raise _bad_handle(operation, shown, f"ttlMs {lease.ttl_ms!r} is out of range")
    if (
        not isinstance(lease.renewal, int)
        or isinstance(lease.renewal, bool)
        or not 0 <= lease.renewal <= MAX_SAFE_INTEGER
    ):
        raise _bad_handle(operation, shown, "renewal is not a non-negative integer")
    if not isinstance(lease.writer_id, str):
        raise _bad_handle(operation, shown, "writerId is not a string")
    written = lease.written_at_local_ms
    if not isinstance(written, int | float) or isinstance(written, bool) or written != written:
        raise _bad_handle(operation, shown, "writtenAtLocalMs is not a number")
    if lease.manifest_key is not None and not isinstance(lease.manifest_key, str):
        raise _bad_handle(operation, shown, "manifestKey is not a string")
    return lease


# --- utils ---


def _body_for(lease: Lease, renewal: int, writer_id: str) -> bytes:
    return encode_lease_body(
        lease.secret,
        lease_id=lease.lease_id,
        branch=lease.branch,
        version=lease.version,
        ttl_ms=lease.ttl_ms,
        renewal=renewal,
        writer_id=writer_id,
    )


def _resolve(ctx: Context, abort: threading.Event | None) -> ResolveOptions:
    return ResolveOptions(policy=ctx.reissue, sleep=ctx.sleep, abort=abort)


_REFUSAL_CODE: dict[str, str] = {
    "draining": "RETIRING",
    "sealed": "SEALED",
    "committed": "COMMITTED",
}


def _refusal(
    operation: str, branch: str, version: int, state: AdmissionState, key: str
) -> HoldfastError:
    return HoldfastError(
        "refused",
        operation,
        f"version {version} of branch {branch} is {state}",
        key=key,
        code=_REFUSAL_CODE.get(state, "RETIRING"),
        hint=(
            "a cleanup is retiring this version; retry later: if the cleanup retains it, "
            "acquisition succeeds"
            if state == "draining"
            else "the version is being retired; protection ends at the lease's previous expiry"
        ),
    )


def _remove_quietly(ctx: Context, key: str) -> None:
    try:
        ctx.store.delete(key)
    except HoldfastError:
        pass  # a leftover lease only makes cleanup more conservative until its TTL passes


def _bad_handle(operation: str, key: str | None, why: str) -> HoldfastError:
    return HoldfastError(
        "invalid-input",
        operation,
        f"not a lease handle: {why}",
        key=key,
        code=INVALID_LEASE_HANDLE,
        hint="pass the Lease acquire or renew returned, unchanged",
    )


def _invalid_ttl(operation: str, message: str) -> HoldfastError:
    return HoldfastError(
        "invalid-input",
        operation,
        message,
        code="INVALID_TTL",
        hint="hold a lease longer than the maximum with holdfast.lease(...), which renews it",
    )


def _int(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None
