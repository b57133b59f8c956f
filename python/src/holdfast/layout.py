"""Keys of the objects the lease protocol reads and writes (docs/protocol.md §1, §4).

The same keys the TypeScript packages write: ``_holdfast/leases/{branch}/{version:020d}/
{leaseId}.{tag}.json`` for leases, ``_holdfast/retirement/{branch}/{min:020d}-{max:020d}-
{opId}.json`` for retirement records, ``_holdfast/refs/fences/{branch}.json`` for branch
deletion fences, ``_versions/{branch}/{version:020d}.json`` for manifests of the holdfast
format, and ``_holdfast/clock/{ulid}`` for storage-time probes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .errors import HoldfastError

MAX_NAME_LENGTH = 128
DEFAULT_BRANCH = "main"
MAX_SAFE_INTEGER = 2**53 - 1
VERSION_DIGITS = 20

LEASES_PREFIX = "_holdfast/leases/"
RETIREMENT_ROOT = "_holdfast/retirement/"
CLOCK_PREFIX = "_holdfast/clock/"
VERSIONS_PREFIX = "_versions/"

_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]*\Z")
_ULID = re.compile(r"[0-9A-HJKMNP-TV-Z]{26}\Z")
_LEASE_KEY = re.compile(
    r"_holdfast/leases/([^/]+)/(\d{20})/([0-9A-HJKMNP-TV-Z]{26})(?:\.([0-9a-f]{32}))?\.json\Z"
)
_RETIREMENT_TAIL = re.compile(r"(\d{20})-(\d{20})-([0-9A-Za-z]+)\.json\Z")


def validate_name(name: object, kind: str = "branch") -> str:
    """A branch or tag name: one path segment of 1..128 characters of ``[A-Za-z0-9._-]``,
    not starting with ``.`` or ``-`` (invariant 6: refused before anything is written)."""
    if (
        isinstance(name, str)
        and len(name) <= MAX_NAME_LENGTH
        and name not in (".", "..")
        and _NAME.match(name)
    ):
        return name

    def fail(why: str) -> HoldfastError:
        return HoldfastError(
            "invalid-input",
            "validate",
            f"invalid {kind} name {name!r}: {why}",
            code="INVALID_NAME",
            hint=f"a {kind} name is 1..{MAX_NAME_LENGTH} characters of A-Z a-z 0-9 . _ - and "
            "does not start with . or -",
        )

    if not isinstance(name, str):
        raise fail("not a string")
    if name == "":
        raise fail("empty")
    if len(name) > MAX_NAME_LENGTH:
        raise fail(f"longer than {MAX_NAME_LENGTH} characters")
    if name in (".", ".."):
        raise fail("a relative path segment")
    if name.startswith((".", "-")):
        raise fail("starts with '.' or '-'")
    raise fail("contains a character outside [A-Za-z0-9._-]")


def is_valid_name(name: object) -> bool:
    try:
        validate_name(name)
    except HoldfastError:
        return False
    return True


def validate_version(version: object) -> int:
    """A version number: an exact integer from 1 to 2^53 - 1 (bools are not numbers here)."""
    if (
        not isinstance(version, int)
        or isinstance(version, bool)
        or version < 1
        or version > MAX_SAFE_INTEGER
    ):
        raise HoldfastError(
            "invalid-input",
            "validate",
            f"invalid version {version!r}: not an integer >= 1",
            code="INVALID_VERSION",
        )
    return version


def is_ulid(value: object) -> bool:
    return isinstance(value, str) and _ULID.match(value) is not None


def format_version(version: int) -> str:
    return str(validate_version(version)).zfill(VERSION_DIGITS)


def manifest_key(branch: str, version: int) -> str:
    """``_versions/{branch}/{version:020d}.json``: a version of the holdfast format."""
    return f"{VERSIONS_PREFIX}{validate_name(branch)}/{format_version(version)}.json"


def branch_leases_prefix(branch: str) -> str:
    return f"{LEASES_PREFIX}{validate_name(branch)}/"


def version_leases_prefix(branch: str, version: int) -> str:
    return f"{branch_leases_prefix(branch)}{format_version(version)}/"


def lease_key(branch: str, version: int, lease_id: str, tag: str) -> str:
    """``_holdfast/leases/{branch}/{version:020d}/{leaseId}.{tag}.json`` where ``tag`` is
    :func:`holdfast.secret.lease_tag` of the lease's secret."""
    return f"{version_leases_prefix(branch, version)}{lease_id}.{tag}.json"


@dataclass(frozen=True)
class LeaseKeyParts:
    branch: str
    version: int
    lease_id: str
    tag: str | None
    """``None`` for a schema 1 key (``{leaseId}.json``): it protects until it expires, but no
    handle can renew or release it."""


def parse_lease_key(key: str) -> LeaseKeyParts | None:
    """Inverse of :func:`lease_key` (also the schema 1 shape); ``None`` for a foreign key."""
    match = _LEASE_KEY.match(key)
    if match is None:
        return None
    version = int(match.group(2))
    if version < 1 or version > MAX_SAFE_INTEGER:
        return None
    return LeaseKeyParts(match.group(1), version, match.group(3), match.group(4))


def branch_fence_key(branch: str) -> str:
    """The termination fence a branch deletion writes; acquirers read it after their write."""
    return f"_holdfast/refs/fences/{validate_name(branch)}.json"


def retirement_prefix(branch: str) -> str:
    return f"{RETIREMENT_ROOT}{branch}/"


@dataclass(frozen=True)
class RetirementKeyParts:
    branch: str
    min_version: int
    max_version: int
    op_id: str


def retirement_key(branch: str, min_version: int, max_version: int, op_id: str) -> str:
    return (
        f"{retirement_prefix(branch)}{str(min_version).zfill(VERSION_DIGITS)}-"
        f"{str(max_version).zfill(VERSION_DIGITS)}-{op_id}.json"
    )


def parse_retirement_key(key: str) -> RetirementKeyParts | None:
    """Branch, version range and op id of a record key; ``None`` for a foreign key."""
    if not key.startswith(RETIREMENT_ROOT):
        return None
    rest = key[len(RETIREMENT_ROOT) :]
    slash = rest.find("/")
    if slash <= 0:
        return None
    match = _RETIREMENT_TAIL.match(rest[slash + 1 :])
    if match is None:
        return None
    low, high = int(match.group(1)), int(match.group(2))
    if low > MAX_SAFE_INTEGER or high > MAX_SAFE_INTEGER:
        return None
    return RetirementKeyParts(rest[:slash], low, high, match.group(3))


def clock_probe_key(probe_id: str) -> str:
    return f"{CLOCK_PREFIX}{probe_id}"
