"""Cleanup and compaction of Lance tables that respect holdfast's leases (docs/lance.md,
"Cleanup and compaction from Python").

:func:`cleanup_old_versions` has the shape of pylance's
``LanceDataset.cleanup_old_versions`` so a user swaps one line; it runs holdfast's cleanup
(:func:`holdfast.cleanup`, the bundled TypeScript CLI). :func:`optimize` compacts files and
optimizes indices through pylance with no cleanup of Lance's (LanceDB's
``table.optimize()`` always runs Lance's cleanup, 7 days by default), then runs holdfast's.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from ..cleaning import CleanupProgress, CleanupStats, cleanup
from ..errors import HoldfastError

__all__ = [
    "AUTO_CLEANUP_KEYS",
    "LanceAutoCleanupWarning",
    "OptimizeResult",
    "cleanup_old_versions",
    "optimize",
    "warn_auto_cleanup",
]

AUTO_CLEANUP_KEYS = (
    "lance.auto_cleanup.interval",
    "lance.auto_cleanup.older_than",
    "lance.auto_cleanup.retain_versions",
)
"""The table config keys that make Lance's writers run Lance's own cleanup inside their
commits (``LanceDataset.optimize.enable_auto_cleanup``, ``auto_cleanup_options``)."""

PYLANCE_DEFAULT_OLDER_THAN = timedelta(days=14)
"""pylance's ``cleanup_old_versions`` default when neither ``older_than`` nor
``retain_versions`` is given."""

LANCEDB_DEFAULT_OLDER_THAN = timedelta(days=7)
"""LanceDB's ``table.optimize()`` default ``cleanup_older_than``."""


class LanceAutoCleanupWarning(UserWarning):
    """The table's config turns on Lance's automatic cleanup: every Lance writer deletes old
    versions inside its commits, ignoring holdfast's leases."""


def warn_auto_cleanup(config: Mapping[str, str], where: str, *, stacklevel: int = 3) -> bool:
    """Warns (:class:`LanceAutoCleanupWarning`) when ``config`` (a Lance table's config)
    sets any ``lance.auto_cleanup.*`` key, naming the keys and how to turn them off; True
    when it warned."""
    on = sorted(k for k in config if k.startswith("lance.auto_cleanup."))
    if not on:
        return False
    warnings.warn(
        f"the Lance table {where} has Lance's automatic cleanup on ({', '.join(on)}): every "
        "Lance writer deletes old versions inside its commits and ignores holdfast's leases, "
        "so a leased version can lose its files. Turn it off with "
        "ds.optimize.disable_auto_cleanup() (pylance), i.e. delete the config keys "
        f"{', '.join(on)}, and run holdfast's cleanup instead",
        LanceAutoCleanupWarning,
        stacklevel=stacklevel,
    )
    return True


def cleanup_old_versions(
    uri: str,
    older_than: timedelta | None = None,
    retain_versions: int | None = None,
    *,
    delete_unverified: bool = False,
    error_if_tagged_old_versions: bool = True,
    delete_rate_limit: int | None = None,
    delete_concurrency: int | None = None,
    min_age: timedelta | None = None,
    dry_run: bool = False,
    storage_options: Mapping[str, str] | None = None,
    progress: Callable[[CleanupProgress], None] | None = None,
    node: str | None = None,
) -> CleanupStats:
    """pylance's ``ds.cleanup_old_versions(...)``, run by holdfast's cleanup: the same
    arguments (``older_than`` 14 days when neither it nor ``retain_versions`` is given;
    both given: a version must meet both), and versions a lease, a tag or a branch needs
    are kept. ``delete_unverified=True`` deletes files no manifest names at once (as Lance,
    only safe when no other process writes: it states that no writer is active);
    ``delete_rate_limit`` is deletes a second. Versions younger than ``min_age`` (5 minutes
    unless given) are kept: a writer whose commit answer was lost may still be re-issuing
    it."""
    if older_than is None and retain_versions is None:
        older_than = PYLANCE_DEFAULT_OLDER_THAN
    return cleanup(
        uri,
        older_than=older_than,
        retain_versions=retain_versions,
        min_age=min_age,
        orphan_grace=timedelta(0) if delete_unverified else None,
        no_writer_active=delete_unverified,
        error_if_tagged=error_if_tagged_old_versions,
        dry_run=dry_run,
        max_deletes_per_second=delete_rate_limit,
        delete_concurrency=delete_concurrency,
        storage_options=storage_options,
        progress=progress,
        node=node,
    )


@dataclass(frozen=True)
class OptimizeResult:
    """What :func:`optimize` did: pylance's compaction stats (``None`` when it did not
    compact), whether it optimized indices, and holdfast's cleanup stats."""

    compaction: Any
    indices_optimized: bool
    cleanup: CleanupStats


def optimize(
    table_or_uri: Any,
    *,
    older_than: timedelta | None = LANCEDB_DEFAULT_OLDER_THAN,
    retain_versions: int | None = None,
    compact: bool = True,
    optimize_indices: bool = True,
    compaction_options: Mapping[str, Any] | None = None,
    index_options: Mapping[str, Any] | None = None,
    min_age: timedelta | None = None,
    storage_options: Mapping[str, str] | None = None,
    progress: Callable[[CleanupProgress], None] | None = None,
    node: str | None = None,
) -> OptimizeResult:
    """LanceDB's ``table.optimize()`` without Lance's cleanup: compacts files
    (``ds.optimize.compact_files(**compaction_options)``) and adds new rows to the indices
    (``ds.optimize.optimize_indices(**index_options)``) through pylance, neither of which
    deletes a version, then runs holdfast's cleanup with ``older_than`` (LanceDB's 7 days by
    default) and ``retain_versions``. ``table_or_uri`` is a table URI, a
    ``lance.LanceDataset`` or a LanceDB table. A table whose config turns on Lance's
    automatic cleanup is warned about (:class:`LanceAutoCleanupWarning`): its commits here
    would run Lance's cleanup."""
    import lance

    dataset: Any
    if isinstance(table_or_uri, str):
        dataset = lance.dataset(
            table_or_uri, storage_options=dict(storage_options) if storage_options else None
        )
    elif hasattr(table_or_uri, "to_lance"):
        dataset = table_or_uri.to_lance()
        if storage_options is None:
            conn_options = getattr(getattr(table_or_uri, "_conn", None), "storage_options", None)
            storage_options = dict(conn_options) if conn_options else None
    elif hasattr(table_or_uri, "optimize") and hasattr(table_or_uri, "uri"):
        dataset = table_or_uri
    else:
        raise HoldfastError(
            "invalid-input",
            "optimize",
            f"optimize needs a table URI, a lance.LanceDataset or a LanceDB table, got "
            f"{type(table_or_uri).__name__}",
            code="INVALID_ARGUMENT",
        )
    uri = str(dataset.uri)
    warn_auto_cleanup(dataset.config(), uri)
    compaction = (
        dataset.optimize.compact_files(**dict(compaction_options or {})) if compact else None
    )
    if optimize_indices and dataset.describe_indices():
        dataset.optimize.optimize_indices(**dict(index_options or {}))
    stats = cleanup(
        uri,
        older_than=older_than,
        retain_versions=retain_versions,
        min_age=min_age,
        storage_options=storage_options,
        progress=progress,
        node=node,
    )
    if hasattr(table_or_uri, "checkout_latest"):
        table_or_uri.checkout_latest()
    return OptimizeResult(compaction, bool(optimize_indices), stats)
