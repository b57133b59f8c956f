"""A Lance dataset held at a version by a lease (docs/lance.md): pylance readers and
holdfast's cleanup (``holdfast cleanup <table>``) share a table safely.

``with holdfast.lance.checkout(uri, version=3, ttl=30) as co:`` acquires a lease on the
table's ``main`` version 3 (its manifest, in the table's own V1 or V2 naming, is what the
acquire checks after its write), opens the ``lance.LanceDataset`` at that version, renews the
lease in the background, and releases it on exit. ``co.dataset`` checks the lease first, so
a reader that lost its lease learns it before it reads. Lance's own
``cleanup_old_versions`` ignores leases: run holdfast's cleanup instead.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Literal
from urllib.parse import unquote, urlparse

from .context import Context, as_context
from .errors import HoldfastError
from .keeper import HeldLease, lease
from .lease import Lease
from .store import ObjectStore, list_all

LANCE_VERSIONS_PREFIX = "_versions/"
LANCE_MAIN_BRANCH = "main"
U64_MAX = 2**64 - 1
LanceNaming = Literal["v1", "v2"]
_DIGITS = re.compile(r"\d+\Z")


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


def lance_manifest_key(naming: LanceNaming, version: int) -> str:
    """The manifest key of ``version`` under ``naming``."""
    if naming == "v1":
        return f"{LANCE_VERSIONS_PREFIX}{version}.manifest"
    return f"{LANCE_VERSIONS_PREFIX}{str(U64_MAX - version).zfill(20)}.manifest"


def detect_naming(store: ObjectStore | Context) -> LanceNaming:
    """The manifest naming of the Lance table at the store's root, from its manifests
    (one table uses one scheme; a mix is refused, as packages/format-lance refuses it)."""
    ctx = as_context(store)
    seen: set[LanceNaming] = set()
    for meta in list_all(ctx.store, LANCE_VERSIONS_PREFIX):
        entry = classify_versions_key(meta.key)
        if entry is not None:
            seen.add(entry[0])
    if not seen:
        raise HoldfastError(
            "not-found",
            "open",
            f"{ctx.store.location} has no Lance manifest under {LANCE_VERSIONS_PREFIX}",
            code="LANCE_NOT_FOUND",
        )
    if len(seen) > 1:
        raise HoldfastError(
            "unsupported",
            "open",
            f"{ctx.store.location} mixes V1 and V2 manifest naming",
            code="LANCE_MIXED_NAMING",
        )
    return seen.pop()


def open_store(uri: str, storage_options: dict[str, str] | None = None) -> ObjectStore:
    """The store under a Lance table URI: a local path or ``file://``, ``s3://bucket/path``
    (``aws_endpoint``, ``aws_region``, ``aws_access_key_id``, ``aws_secret_access_key``,
    ``aws_virtual_hosted_style_request`` from Lance's storage options), or
    ``az://container/path`` (``AZURE_STORAGE_CONNECTION_STRING`` or the
    ``azure_storage_connection_string`` option)."""
    options = {k.lower(): v for k, v in (storage_options or {}).items()}
    parsed = urlparse(uri)
    if parsed.scheme in ("", "file"):
        from .local import LocalStore

        return LocalStore(unquote(parsed.path) if parsed.scheme == "file" else uri)
    prefix = parsed.path.strip("/")
    if parsed.scheme in ("s3", "s3a"):
        from .s3 import open_s3_store

        endpoint = (
            options.get("aws_endpoint")
            or options.get("endpoint")
            or os.environ.get("AWS_ENDPOINT_URL")
        )
        virtual = options.get(
            "aws_virtual_hosted_style_request", "true" if endpoint is None else "false"
        )
        return open_s3_store(
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
        from .azure import AzureStore

        return AzureStore(
            parsed.netloc,
            prefix,
            connection_string=options.get("azure_storage_connection_string"),
        )
    raise HoldfastError(
        "invalid-input", "open", f"unsupported Lance URI {uri!r}", code="INVALID_URL"
    )


@dataclass
class LanceCheckout:
    """A Lance table held at one version by a kept lease."""

    held: HeldLease[Lease]
    version: int
    naming: LanceNaming
    _dataset: Any

    @property
    def dataset(self) -> Any:
        """The ``lance.LanceDataset`` at the leased version. Checks the lease first: raises
        (a :class:`HoldfastError`) once protection may have ended, before any read."""
        self.held.check()
        return self._dataset

    @property
    def lost(self) -> threading.Event:
        return self.held.lost

    @property
    def lease(self) -> Lease:
        return self.held.lease

    def check(self) -> Lease:
        return self.held.check()


@contextmanager
def checkout(
    uri: str,
    *,
    version: int,
    ttl: float | timedelta | None = None,
    ttl_ms: int | None = None,
    storage_options: dict[str, str] | None = None,
    store: ObjectStore | Context | None = None,
) -> Iterator[LanceCheckout]:
    """Leases ``version`` of the Lance table at ``uri`` and opens it there (the lease is
    written and admitted before the manifest is opened, so a version retired first is
    refused instead of read). Renews in the background; releases on exit."""
    import lance

    target = store if store is not None else open_store(uri, storage_options)
    naming = detect_naming(target)
    with lease(
        target,
        version=version,
        ttl=ttl,
        ttl_ms=ttl_ms,
        branch=LANCE_MAIN_BRANCH,
        manifest=lance_manifest_key(naming, version),
    ) as held:
        dataset = lance.dataset(uri, version=version, storage_options=storage_options)
        yield LanceCheckout(held, version, naming, dataset)


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
