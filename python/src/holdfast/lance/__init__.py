"""Lance tables held at a version by a lease (docs/lance.md): pylance and LanceDB readers
and holdfast's cleanup (``holdfast cleanup <table>``) share a table safely.

``with holdfast.lance.checkout(uri, version=3, ttl=30) as co:`` leases version 3 of the
table's ``main`` (``branch="dev"``: of the Lance branch ``dev``, whose manifests live under
``tree/dev/_versions/``), opens the ``lance.LanceDataset`` there, renews the lease in the
background and releases it on exit. ``checkout_table(db, "events", version=3)`` does the same
for a LanceDB table and hands out a ``lancedb`` table. Before any lease is taken the checkout
reads the version's manifest and refuses, by name, whatever ``@holdfast/format-lance``
refuses there (:mod:`holdfast.lance.manifest`): a version holdfast cannot protect is never
handed out as if it were protected. ``co.dataset`` checks the lease first, so a reader that
lost its lease learns it before it reads. Lance's own ``cleanup_old_versions`` ignores
leases: run holdfast's cleanup instead, :func:`cleanup_old_versions` (pylance's call, run by
holdfast) or :func:`optimize` (LanceDB's ``table.optimize()`` with holdfast's cleanup). A
checkout of a table whose config turns on Lance's automatic cleanup warns
(:class:`LanceAutoCleanupWarning`).
"""

from __future__ import annotations

import json
import os
import re
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import timedelta
from typing import Any, Generic, Literal, TypeVar
from urllib.parse import quote, unquote, urlparse

from ..context import Context, as_context
from ..errors import HoldfastError
from ..keeper import HeldLease, lease
from ..layout import MAX_SAFE_INTEGER, is_valid_name, validate_version
from ..lease import Lease, ttl_to_ms
from ..store import ObjectStore, list_all
from ..table_root import TableLocation, locate_table, refuse_table_location
from ._clean import (
    AUTO_CLEANUP_KEYS,
    LanceAutoCleanupWarning,
    OptimizeResult,
    cleanup_old_versions,
    optimize,
    warn_auto_cleanup,
)
from .manifest import (
    LANCE_FEATURE_FLAGS,
    LANCE_MALFORMED_MANIFEST,
    LANCE_MALFORMED_REFERENCE,
    LANCE_UNSUPPORTED,
    LanceFeature,
    ManifestFile,
    UnsupportedLanceDatasetError,
    check_manifest,
    read_manifest_file,
)

__all__ = [
    "AUTO_CLEANUP_KEYS",
    "LANCE_BRANCHES_PREFIX",
    "LANCE_FEATURE_FLAGS",
    "LANCE_MAIN_BRANCH",
    "LANCE_MALFORMED_MANIFEST",
    "LANCE_MALFORMED_REFERENCE",
    "LANCE_TREE_PREFIX",
    "LANCE_UNSUPPORTED",
    "LANCE_VERSIONS_PREFIX",
    "LanceAutoCleanupWarning",
    "LanceCheckout",
    "LanceFeature",
    "LanceNaming",
    "LanceTableCheckout",
    "ManifestFile",
    "OptimizeResult",
    "UnsupportedLanceDatasetError",
    "branch_json_key",
    "branch_root",
    "check_branch_layout",
    "checkout",
    "checkout_table",
    "classify_versions_key",
    "cleanup_old_versions",
    "detect_naming",
    "holdfast_branch_name",
    "lance_manifest_key",
    "lease_branch",
    "open_store",
    "optimize",
    "read_version_manifest",
    "validate_lance_branch",
    "warn_auto_cleanup",
]

LANCE_VERSIONS_PREFIX = "_versions/"
LANCE_MAIN_BRANCH = "main"
LANCE_TREE_PREFIX = "tree/"
LANCE_BRANCHES_PREFIX = "_refs/branches/"
U64_MAX = 2**64 - 1
LanceNaming = Literal["v1", "v2"]
_DIGITS = re.compile(r"\d+\Z")
_DETACHED = re.compile(r"d\d+\.manifest\Z")
_BRANCH_SEGMENT = re.compile(r"[\w.-]+\Z")
_PLAIN_SEGMENT = re.compile(r"[A-Za-z0-9_-](?:[A-Za-z0-9._-]*[A-Za-z0-9_-])?\Z")
_ROOT_FOLDERS = frozenset(
    (
        "_versions",
        "data",
        "_deletions",
        "_indices",
        "_transactions",
        "_refs",
        "tree",
        "_holdfast",
        "_mem_wal",
        "_blobs",
        "_fri",
    )
)


def classify_versions_key(key: str) -> tuple[LanceNaming, int] | None:
    """``(naming, version)`` of a manifest key under ``_versions/``, or ``None`` for anything
    else Lance keeps there (detached ``d{N}``, ``.tmp*`` staging, hints). V1:
    ``{N}.manifest``, never zero-padded; V2: ``{u64::MAX - N:020}.manifest``."""
    name = key[len(LANCE_VERSIONS_PREFIX) :] if key.startswith(LANCE_VERSIONS_PREFIX) else key
    if "/" in name or name.startswith(".tmp") or not name.endswith(".manifest"):
        return None
    stem = name[: -len(".manifest")]
    if not _DIGITS.match(stem):
        return None
    if len(stem) == 20:
        return "v2", _safe(U64_MAX - int(stem), key)
    if len(stem) > 1 and stem.startswith("0"):
        return None
    return "v1", _safe(int(stem), key)


def lance_manifest_key(naming: LanceNaming, version: int, branch: str = LANCE_MAIN_BRANCH) -> str:
    """The manifest key of ``version`` under ``naming``, on ``branch`` (``tree/{branch}/``
    for a Lance branch)."""
    if naming == "v1":
        name = f"{version}.manifest"
    else:
        name = f"{str(U64_MAX - version).zfill(20)}.manifest"
    return f"{branch_root(branch)}{LANCE_VERSIONS_PREFIX}{name}"


def validate_lance_branch(branch: object) -> str:
    """A Lance branch name as Lance accepts it: ``main``, or segments of letters, digits,
    ``.``, ``-`` and ``_`` joined by single ``/`` (``dev``, ``dev/sub``), without ``..``,
    not ending in ``.lock``. Anything else is ``invalid-input`` (INVALID_NAME) before any
    request."""
    if isinstance(branch, str) and branch and ".." not in branch and not branch.endswith(".lock"):
        segments = branch.split("/")
        if all(s not in (".", "..") and _BRANCH_SEGMENT.match(s) for s in segments):
            return branch
    raise HoldfastError(
        "invalid-input",
        "validate",
        f"invalid Lance branch name {branch!r}",
        code="INVALID_NAME",
        hint="a Lance branch is segments of letters, digits, . - _ joined by single /",
    )


def branch_root(branch: str) -> str:
    """A branch's root under the table: ``""`` for main, ``tree/{branch}/`` for a Lance
    branch (``tree/dev/sub/`` for ``dev/sub``)."""
    return "" if branch == LANCE_MAIN_BRANCH else f"{LANCE_TREE_PREFIX}{branch}/"


def branch_json_key(branch: str) -> str:
    """``_refs/branches/{name}.json``, the name percent-encoded as Lance writes it
    (``dev/sub`` is ``dev%2Fsub.json``)."""
    return f"{LANCE_BRANCHES_PREFIX}{quote(branch, safe='')}.json"


def holdfast_branch_name(branch: str) -> str | None:
    """holdfast's name for the Lance branch ``branch``, as ``@holdfast/format-lance`` maps
    it, or ``None`` when it has none. A holdfast branch name is one key segment
    (``[A-Za-z0-9._-]``, 1..128 characters, not starting with ``.`` or ``-``); Lance allows
    ``/`` between segments and never ``..``, so a Lance ``/`` is holdfast's ``..``:
    ``dev/sub`` is ``dev..sub``, and a Lance name that is already a holdfast name is itself.
    Exact both ways: each segment of a nested name starts and ends with a character other
    than ``.`` and the first does not start with ``-``. Any other Lance name (``.x/y``, a
    non-ASCII letter, longer than 128 characters) has none: holdfast neither leases nor
    retires its versions."""
    if "/" not in branch:
        return branch if is_valid_name(branch) and ".." not in branch else None
    segments = branch.split("/")
    if not all(_PLAIN_SEGMENT.match(s) for s in segments) or segments[0].startswith("-"):
        return None
    name = "..".join(segments)
    return name if is_valid_name(name) else None


def lease_branch(branch: str) -> str:
    """The holdfast branch whose leases protect a Lance branch's versions: ``main`` for
    Lance's main, else :func:`holdfast_branch_name` (``dev``; ``dev..sub`` for ``dev/sub``),
    so the lease key is ``_holdfast/leases/{name}/...`` exactly as a TypeScript lease on that
    branch and the cleanup's lease census counts it. A Lance branch without a holdfast name
    is refused (``unsupported``, LANCE_BRANCH_NOT_LEASABLE) before anything is written: no
    key would be one a cleanup reads."""
    name = LANCE_MAIN_BRANCH if branch == LANCE_MAIN_BRANCH else holdfast_branch_name(branch)
    if name is None:
        raise HoldfastError(
            "unsupported",
            "checkout",
            f"Lance branch {branch!r} has no holdfast branch name: its versions cannot be leased",
            code="LANCE_BRANCH_NOT_LEASABLE",
            hint="holdfast names Lance branches whose segments are A-Z a-z 0-9 . _ - (not "
            "starting or ending with .); its cleanup does not retire versions of this one",
        )
    return name


def check_branch_layout(branch: str, key: str) -> None:
    """Refuses (``branch-layout``) a Lance branch whose root would lie inside another root's
    own folders: a segment after the first named like a folder Lance keeps in a root
    (``a/data`` lives in ``tree/a/data/``, which is branch ``a``'s data folder)."""
    nested = branch.split("/")[1:]
    clash = next((s for s in nested if s in _ROOT_FOLDERS), None)
    if clash is None:
        return
    raise UnsupportedLanceDatasetError(
        "branch-layout",
        key,
        f"Lance branch {branch!r} lives in tree/{branch}/, inside the {clash}/ folder of "
        f"tree/{branch[: branch.rindex('/' + clash)]}/: its files and that root's could not "
        "be told apart",
        hint="rename the branch with Lance (a segment after the first other than a Lance "
        "folder name)",
    )


def detect_naming(store: ObjectStore | Context, branch: str = LANCE_MAIN_BRANCH) -> LanceNaming:
    """The manifest naming of ``branch`` (main's ``_versions/``, a Lance branch's
    ``tree/{branch}/_versions/``), from its own manifest names: a branch's naming is its own
    (Lance names a branch's manifests V2 even on a V1 table). As ``@holdfast/format-lance``
    lists a branch, a mix of both schemes is refused (``mixed-naming``), and so is a detached
    version (``_versions/d{N}.manifest``: ``detached-version``); ``not-found`` when the
    branch has no manifest."""
    ctx = as_context(store)
    root = branch_root(validate_lance_branch(branch))
    prefix = f"{root}{LANCE_VERSIONS_PREFIX}"
    seen: LanceNaming | None = None
    for meta in list_all(ctx.store, prefix):
        name = meta.key[len(root) :]
        if _DETACHED.match(name[len(LANCE_VERSIONS_PREFIX) :]):
            raise UnsupportedLanceDatasetError(
                "detached-version",
                meta.key,
                f"Lance detached version {meta.key}: its files would not be protected by a cleanup",
                hint="remove the detached version with Lance, or read this table without a "
                "holdfast lease",
            )
        entry = classify_versions_key(name)
        if entry is None:
            continue
        if seen is None:
            seen = entry[0]
        elif entry[0] != seen:
            raise UnsupportedLanceDatasetError(
                "mixed-naming",
                meta.key,
                f"Lance {prefix} mixes the V1 and V2 manifest naming schemes (met {meta.key})",
                hint="finish the migration with Lance's migrate_manifest_paths_v2 first",
            )
    if seen is None:
        where = "table" if branch == LANCE_MAIN_BRANCH else f"branch {branch!r}"
        raise HoldfastError(
            "not-found",
            "open",
            f"the Lance {where} at {ctx.store.location} has no manifest under {prefix}",
            key=prefix,
            code="LANCE_NOT_FOUND" if branch == LANCE_MAIN_BRANCH else "BRANCH_NOT_FOUND",
        )
    return seen


def read_version_manifest(
    store: ObjectStore | Context, branch: str, version: int, naming: LanceNaming
) -> tuple[str, str, ManifestFile]:
    """Reads and checks the manifest of ``branch`` at ``version``: ``(key, etag, file)``.
    ``not-found`` (VERSION_NOT_FOUND) when it is absent; every refusal of
    :func:`holdfast.lance.manifest.check_manifest` otherwise."""
    ctx = as_context(store)
    key = lance_manifest_key(naming, version, branch)
    got = ctx.store.get(key)
    if got is None:
        raise HoldfastError(
            "not-found",
            "checkout",
            f"version {version} of Lance branch {branch} does not exist",
            key=key,
            code="VERSION_NOT_FOUND",
        )
    file = read_manifest_file(got.body, key)
    check_manifest(file, key, version)
    return key, got.etag, file


def open_store(uri: str, storage_options: dict[str, str] | None = None) -> ObjectStore:
    """The store under a Lance table URI: a local path or ``file://``, ``s3://bucket/path``
    (``aws_endpoint``, ``aws_region``, ``aws_access_key_id``, ``aws_secret_access_key``,
    ``aws_virtual_hosted_style_request`` from Lance's storage options), or
    ``az://container/path`` (the ``azure_storage_connection_string`` option, else Lance's
    ``account_name`` + ``account_key`` with ``azure_endpoint`` for an emulator, else
    ``AZURE_STORAGE_CONNECTION_STRING``).

    Refused before anything is written (docs/lance.md, "Where a table is"): a URI inside a
    table (a branch's folder ``t.lance/tree/dev``, ``_versions/``, ``data/``, an index
    folder, ``_holdfast/``, ...) or naming a folder that holds a table (``invalid-input``
    INSIDE_TABLE / HOLDS_TABLE, naming the table's root), a local path that is a file
    (``invalid-input`` NOT_A_DIRECTORY) or missing (``not-found``): a local folder is never
    created here."""
    locate_uri(uri, storage_options)
    opened = _store_for(uri, storage_options, probe=True)
    assert opened is not None  # locate_uri refused a local path that is no folder
    return opened


def locate_uri(uri: str, storage_options: dict[str, str] | None = None) -> TableLocation:
    """Where ``uri`` stands among tables (:func:`holdfast.table_root.locate_table`, through
    stores that send nothing when opened); raises for a URI inside a table or holding one,
    a local file, or a local path that does not exist."""
    parsed = urlparse(uri)
    segments = _uri_segments(uri)
    if parsed.scheme in ("", "file"):
        path = _local_path(uri)
        if os.path.exists(path) and not os.path.isdir(path):
            raise HoldfastError(
                "invalid-input",
                "open",
                f"{path} is a file, not a table folder",
                key=path,
                code="NOT_A_DIRECTORY",
                hint="give the folder of the Lance table (e.g. .../events.lance)",
            )

    def store_at(at: Sequence[str]) -> ObjectStore | None:
        return _store_for(_uri_at(uri, at), storage_options, probe=False)

    location = locate_table(segments, store_at)
    refuse_table_location(location, lambda at: _uri_at(uri, at), "checkout")
    if (
        location.kind == "none"
        and parsed.scheme in ("", "file")
        and not os.path.isdir(_local_path(uri))
    ):
        raise HoldfastError(
            "not-found",
            "open",
            f"no Lance table at {_local_path(uri)}: the folder does not exist",
            key=_local_path(uri),
            code="DATASET_NOT_FOUND",
        )
    return location


def _local_path(uri: str) -> str:
    parsed = urlparse(uri)
    return os.path.abspath(unquote(parsed.path) if parsed.scheme == "file" else uri)


def _uri_segments(uri: str) -> tuple[str, ...]:
    parsed = urlparse(uri)
    path = _local_path(uri) if parsed.scheme in ("", "file") else parsed.path
    return tuple(s for s in path.split("/") if s)


def _uri_at(uri: str, segments: Sequence[str]) -> str:
    """``uri`` with its path replaced by ``segments`` (same scheme and bucket)."""
    parsed = urlparse(uri)
    path = "/".join(segments)
    if parsed.scheme in ("", "file"):
        return f"/{path}"
    return (
        f"{parsed.scheme}://{parsed.netloc}/{path}"
        if path
        else f"{parsed.scheme}://{parsed.netloc}"
    )


def _store_for(
    uri: str, storage_options: dict[str, str] | None, *, probe: bool
) -> ObjectStore | None:
    """The store at ``uri``; ``probe=False``: one that sends nothing when opened (no S3
    probe), and ``None`` for a local path that is not a folder."""
    options = {k.lower(): v for k, v in (storage_options or {}).items()}
    parsed = urlparse(uri)
    if parsed.scheme in ("", "file"):
        from ..local import LocalStore

        path = _local_path(uri)
        if not os.path.isdir(path):
            return None
        return LocalStore(path, create_root=False)
    prefix = parsed.path.strip("/")
    if parsed.scheme in ("s3", "s3a"):
        from ..s3 import S3Store, open_s3_store

        endpoint = (
            options.get("aws_endpoint")
            or options.get("endpoint")
            or os.environ.get("AWS_ENDPOINT_URL")
        )
        virtual = options.get(
            "aws_virtual_hosted_style_request", "true" if endpoint is None else "false"
        )
        # probe=False: a store that sends nothing when opened (locating a URI).
        return (open_s3_store if probe else S3Store)(
            parsed.netloc,
            prefix,
            endpoint=endpoint,
            region=options.get("aws_region")
            or options.get("region")
            or os.environ.get("AWS_REGION"),
            path_style=virtual.lower() == "false",
            aws_access_key_id=options.get("aws_access_key_id"),
            aws_secret_access_key=options.get("aws_secret_access_key"),
        )
    if parsed.scheme in ("az", "abfs", "azure"):
        from ..azure import AzureStore

        return AzureStore(
            parsed.netloc, prefix, connection_string=_azure_connection_string(options)
        )
    if parsed.scheme == "gs":
        from ..gcs import GcsStore, open_gcs_store

        # Application Default Credentials; STORAGE_EMULATOR_HOST for an emulator.
        if not probe:
            return GcsStore(parsed.netloc, prefix)
        return open_gcs_store(parsed.netloc, prefix)
    raise HoldfastError(
        "invalid-input", "open", f"unsupported Lance URI {uri!r}", code="INVALID_URL"
    )


D = TypeVar("D")


class _Held(Generic[D]):
    """A handle on something Lance reads, handed out only while the lease holds."""

    def __init__(
        self, held: HeldLease[Lease], branch: str, version: int, naming: LanceNaming, value: D
    ) -> None:
        self.held = held
        self.branch = branch
        self.version = version
        self.naming = naming
        self._value = value

    def _checked(self) -> D:
        self.held.check()
        return self._value

    @property
    def lost(self) -> threading.Event:
        return self.held.lost

    @property
    def lease(self) -> Lease:
        return self.held.lease

    def check(self) -> Lease:
        """The current lease; raises once protection may have ended."""
        return self.held.check()


class LanceCheckout(_Held[Any]):
    """A Lance table held at one version of one branch by a kept lease."""

    @property
    def dataset(self) -> Any:
        """The ``lance.LanceDataset`` at the leased branch and version. Checks the lease
        first: raises (a :class:`HoldfastError`) once protection may have ended, before any
        read."""
        return self._checked()


class LanceTableCheckout(_Held[Any]):
    """A LanceDB table held at one version of one branch by a kept lease."""

    @property
    def table(self) -> Any:
        """The ``lancedb`` table at the leased branch and version (read-only). Checks the
        lease first, like :attr:`LanceCheckout.dataset`."""
        return self._checked()


@contextmanager
def _held_version(
    target: ObjectStore | Context,
    *,
    branch: str,
    version: int,
    ttl: float | timedelta | None,
    ttl_ms: int | None,
) -> Iterator[tuple[HeldLease[Lease], LanceNaming]]:
    """Reads and checks everything the checkout depends on, then leases the version: the
    branch's reference chain, its manifest naming, the version's manifest (every refusal
    before any lease is written), then the lease, whose acquire reads the manifest again
    after its write and admission and refuses it if it is not the object checked."""
    ctx = as_context(target)
    branch = validate_lance_branch(branch)
    version = validate_version(version)
    holder = lease_branch(branch)
    if branch != LANCE_MAIN_BRANCH:
        check_branch_layout(branch, branch_json_key(branch))
        _check_branch_chain(ctx, branch)
    naming = detect_naming(ctx, branch)
    key, etag, _ = read_version_manifest(ctx, branch, version, naming)
    with lease(
        ctx,
        version=version,
        ttl=ttl,
        ttl_ms=ttl_ms,
        branch=holder,
        manifest=key,
        manifest_etag=etag,
    ) as held:
        yield held, naming


@contextmanager
def checkout(
    uri: str,
    *,
    version: int,
    branch: str = LANCE_MAIN_BRANCH,
    ttl: float | timedelta | None = None,
    ttl_ms: int | None = None,
    storage_options: dict[str, str] | None = None,
    store: ObjectStore | Context | None = None,
) -> Iterator[LanceCheckout]:
    """Leases ``version`` of ``branch`` of the Lance table at ``uri`` and opens it there
    (pylance's checkout of that branch version). Refuses before any lease what
    ``@holdfast/format-lance`` refuses (:class:`UnsupportedLanceDatasetError`,
    LANCE_MALFORMED_MANIFEST, ...); the lease is written and admitted before the dataset is
    opened, so a version retired first is refused instead of read. Renews in the
    background; releases on exit."""
    import lance

    ttl_to_ms(ttl, ttl_ms, "checkout")
    target = _checkout_store(uri, storage_options, store)
    with _held_version(target, branch=branch, version=version, ttl=ttl, ttl_ms=ttl_ms) as (
        held,
        naming,
    ):
        head = lance.dataset(uri, storage_options=storage_options)
        warn_auto_cleanup(head.config(), uri, stacklevel=4)
        if branch == LANCE_MAIN_BRANCH:
            dataset = lance.dataset(uri, version=version, storage_options=storage_options)
        else:
            dataset = head.checkout_version((branch, version))
        yield LanceCheckout(held, branch, version, naming, dataset)


@contextmanager
def checkout_table(
    db: Any,
    name: str,
    *,
    version: int,
    branch: str = LANCE_MAIN_BRANCH,
    ttl: float | timedelta | None = None,
    ttl_ms: int | None = None,
    storage_options: dict[str, str] | None = None,
    store: ObjectStore | Context | None = None,
) -> Iterator[LanceTableCheckout]:
    """The same for a LanceDB table: ``db`` is a ``lancedb`` connection or its URI,
    ``name`` the table. The table's folder is the one LanceDB reports for it (opening the
    table reads only its latest ``main`` manifest, which a cleanup always keeps); the
    version is leased and checked as :func:`checkout` does, then the table is opened at that
    branch and version."""
    import lancedb

    ttl_to_ms(ttl, ttl_ms, "checkout")
    conn: Any = lancedb.connect(db, storage_options=storage_options) if isinstance(db, str) else db
    options = storage_options if storage_options is not None else _connection_options(conn)
    try:
        opened = conn.open_table(name)
    except ValueError as error:
        # LanceDB answers ValueError for a table it does not have (and for a name it refuses).
        raise HoldfastError(
            "not-found",
            "checkout",
            f"LanceDB has no table {name!r}: {error}",
            key=name,
            code="TABLE_NOT_FOUND",
        ) from error
    uri = str(opened.uri)
    target = _checkout_store(uri, options, store)
    with _held_version(target, branch=branch, version=version, ttl=ttl, ttl_ms=ttl_ms) as (
        held,
        naming,
    ):
        warn_auto_cleanup(conn.open_table(name).to_lance().config(), uri, stacklevel=4)
        if branch == LANCE_MAIN_BRANCH:
            table = conn.open_table(name, version=version)
        else:
            table = conn.open_table(name, branch=branch, version=version)
        yield LanceTableCheckout(held, branch, version, naming, table)


# --- utils ---


def _checkout_store(
    uri: str, storage_options: dict[str, str] | None, store: ObjectStore | Context | None
) -> ObjectStore | Context:
    """The store a checkout of ``uri`` leases through: ``uri`` located first (a URI inside a
    table or holding one is refused, :func:`locate_uri`), then ``store`` when given, which
    must be rooted at ``uri`` itself (a store of another table would hold a lease that
    protects nothing here: ``invalid-input`` STORE_MISMATCH), else the store at ``uri``.
    Nothing is written before these checks."""
    if store is None:
        return open_store(uri, storage_options)
    locate_uri(uri, storage_options)
    given = as_context(store).store.location
    expected = _location_of(uri)
    if given.rstrip("/") != expected:
        raise HoldfastError(
            "invalid-input",
            "checkout",
            f"store= is rooted at {given}, not at the table {expected}: a lease there would "
            "not protect this table; nothing was written",
            key=given,
            code="STORE_MISMATCH",
            hint="pass the store of the table's own folder, or leave store= out",
        )
    return store


def _location_of(uri: str) -> str:
    """The ``location`` a holdfast store rooted at ``uri`` reports."""
    parsed = urlparse(uri)
    if parsed.scheme in ("", "file"):
        return f"file://{_local_path(uri)}"
    scheme = {"s3a": "s3", "abfs": "az", "azure": "az"}.get(parsed.scheme, parsed.scheme)
    prefix = parsed.path.strip("/")
    return f"{scheme}://{parsed.netloc}/{prefix}" if prefix else f"{scheme}://{parsed.netloc}"


def _check_branch_chain(ctx: Context, branch: str) -> None:
    """The branch's ``_refs/branches/`` JSON and its parents' down to main, as the Lance
    reference census reads them: a branch whose JSON is gone while its folder holds versions
    is a creation in flight or a leftover (``zombie-branch``), as is one whose parent's JSON
    is gone; an unreadable JSON is LANCE_MALFORMED_REFERENCE; a cycle is refused."""
    seen: set[str] = set()
    current = branch
    while current != LANCE_MAIN_BRANCH:
        if current in seen:
            raise UnsupportedLanceDatasetError(
                "foreign-reference",
                branch_json_key(current),
                f"Lance branches form a cycle through {current}",
            )
        seen.add(current)
        key = branch_json_key(current)
        got = ctx.store.get(key)
        if got is None:
            if current == branch and not _has_versions(ctx, branch):
                raise HoldfastError(
                    "not-found",
                    "checkout",
                    f"the Lance table has no branch {branch!r}",
                    key=key,
                    code="BRANCH_NOT_FOUND",
                )
            raise UnsupportedLanceDatasetError(
                "zombie-branch",
                key,
                f"Lance branch {current} has no {key}"
                + ("" if current == branch else f" (branch {branch} descends from it)"),
                hint="a branch creation in flight or a leftover: holdfast cannot tell which "
                "versions its files come from",
            )
        current = _parent_branch(got.body, key)


def _parent_branch(body: bytes, key: str) -> str:
    def bad(why: str) -> HoldfastError:
        return HoldfastError(
            "invalid-input",
            "readReference",
            f"Lance reference {key} is unreadable: {why}",
            key=key,
            code=LANCE_MALFORMED_REFERENCE,
        )

    try:
        value = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as error:
        raise bad("not JSON") from error
    if not isinstance(value, dict):
        raise bad("not an object")
    parent_version = value.get("parentVersion")
    if (
        not isinstance(parent_version, int)
        or isinstance(parent_version, bool)
        or not 0 <= parent_version <= MAX_SAFE_INTEGER
    ):
        raise bad("parentVersion is not a version number")
    parent = value.get("parentBranch")
    if parent is None:
        return LANCE_MAIN_BRANCH
    if not isinstance(parent, str):
        raise bad("parentBranch is not a string")
    return parent


def _has_versions(ctx: Context, branch: str) -> bool:
    page = ctx.store.list(f"{branch_root(branch)}{LANCE_VERSIONS_PREFIX}")
    return bool(page.objects)


def _azure_connection_string(options: dict[str, str]) -> str | None:
    """A connection string from Lance's Azure storage options, or ``None`` (the store then
    reads ``AZURE_STORAGE_CONNECTION_STRING``)."""
    given = options.get("azure_storage_connection_string")
    if given:
        return given
    account = options.get("account_name") or options.get("azure_storage_account_name")
    key = options.get("account_key") or options.get("azure_storage_account_key")
    if not account or not key:
        return None
    endpoint = (
        options.get("azure_endpoint")
        or options.get("endpoint")
        or f"https://{account}.blob.core.windows.net"
    )
    protocol = "http" if endpoint.startswith("http://") else "https"
    return (
        f"DefaultEndpointsProtocol={protocol};AccountName={account};AccountKey={key};"
        f"BlobEndpoint={endpoint};"
    )


def _connection_options(conn: Any) -> dict[str, str] | None:
    options = getattr(conn, "storage_options", None)
    return dict(options) if options else None


def _safe(version: int, key: str) -> int:
    if version < 0 or version > 2**53 - 1:
        raise HoldfastError(
            "invalid-input",
            "list",
            f"Lance manifest {key} names version {version}, beyond what holdfast handles exactly",
            key=key,
            code="INVALID_VERSION",
        )
    return version
