"""holdfast for Python: leases on versioned datasets straight on the store, no server.

Byte-compatible with the TypeScript ``@holdfast/leases`` (the same keys, bodies, storage-time
rule and admission checks; docs/protocol.md §3, §4), on a local file system, S3 and
S3-compatible stores (Ceph RGW) and Azure Blob Storage::

    import holdfast

    store = holdfast.LocalStore("/data/ds")
    with holdfast.lease(store, version=12, ttl=30) as held:
        held.check()          # raises once protection may have ended
        ...                   # read version 12
"""

from __future__ import annotations

from .admission import Admission, AdmissionState, read_admission
from .cleaning import (
    CleanupProgress,
    CleanupStats,
    KeptVersion,
    ObjectsDeleted,
    RetiredVersion,
    cleanup,
)
from .context import (
    Context,
    ReissuePolicy,
    encode_ulid,
    real_sleep,
    seeded_random_bytes,
    system_clock,
    ulid_ids,
)
from .errors import ERROR_KINDS, ErrorKind, HoldfastError, is_holdfast_error
from .keeper import HeldLease, keep, lease
from .layout import (
    DEFAULT_BRANCH,
    branch_fence_key,
    lease_key,
    manifest_key,
    parse_lease_key,
    retirement_key,
)
from .lease import (
    MAX_TTL_MS,
    MIN_TTL_MS,
    Lease,
    LeaseBody,
    acquire,
    encode_lease_body,
    parse_lease_body,
    release,
    renew,
    validate_lease_handle,
)
from .listing import LeaseEntry, list_leases
from .local import LocalStore
from .resolve import (
    Applied,
    Conflict,
    ResolveOptions,
    delete_if_match,
    put_if_absent,
    put_if_match,
    resolve_conditional_put,
)
from .secret import LEASE_SECRET_BYTES, lease_proof, lease_tag, verify_lease_proof
from .storage_time import (
    is_active_at,
    lease_expires_at,
    precision_interval_ms,
    storage_now,
    trunc_sec,
)
from .store import Capabilities, GetResult, IfAbsent, IfMatch, ListPage, ObjectMeta, ObjectStore

list = list_leases
"""``holdfast.list(store, branch=..., version=...)``: the same as :func:`list_leases`."""

__version__ = "0.1.0"

__all__ = [
    "DEFAULT_BRANCH",
    "ERROR_KINDS",
    "LEASE_SECRET_BYTES",
    "MAX_TTL_MS",
    "MIN_TTL_MS",
    "Admission",
    "AdmissionState",
    "Applied",
    "Capabilities",
    "CleanupProgress",
    "CleanupStats",
    "Conflict",
    "Context",
    "ErrorKind",
    "GetResult",
    "HeldLease",
    "HoldfastError",
    "IfAbsent",
    "IfMatch",
    "KeptVersion",
    "Lease",
    "LeaseBody",
    "LeaseEntry",
    "ListPage",
    "LocalStore",
    "ObjectMeta",
    "ObjectStore",
    "ObjectsDeleted",
    "ReissuePolicy",
    "ResolveOptions",
    "RetiredVersion",
    "acquire",
    "branch_fence_key",
    "cleanup",
    "delete_if_match",
    "encode_lease_body",
    "encode_ulid",
    "is_active_at",
    "is_holdfast_error",
    "keep",
    "lease",
    "lease_expires_at",
    "lease_key",
    "lease_proof",
    "lease_tag",
    "list",
    "list_leases",
    "manifest_key",
    "parse_lease_body",
    "parse_lease_key",
    "precision_interval_ms",
    "put_if_absent",
    "put_if_match",
    "read_admission",
    "real_sleep",
    "release",
    "renew",
    "resolve_conditional_put",
    "retirement_key",
    "seeded_random_bytes",
    "storage_now",
    "system_clock",
    "trunc_sec",
    "ulid_ids",
    "validate_lease_handle",
    "verify_lease_proof",
]
