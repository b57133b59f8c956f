"""Lance tables held by leases (docs/lance.md): the failure of "The failure this prevents"
reproduced with pylance, and the same reader safe with ``holdfast.lance.checkout`` and
holdfast's cleanup."""

from __future__ import annotations

import time
from datetime import timedelta
from pathlib import Path

import lance
import pyarrow as pa
import pytest

import holdfast
import holdfast.lance as hl
from holdfast.errors import HoldfastError


def table(uri: str, versions: int = 4, *, v2: bool = True) -> dict[int, int]:
    """Versions 1..n, each an overwrite (a version's data files belong to it alone); answers
    the sum of column x per version, to check reads."""
    sums: dict[int, int] = {}
    for i in range(versions):
        rows = list(range(i * 100, i * 100 + 50))
        lance.write_dataset(
            pa.table({"x": rows}),
            uri,
            mode="overwrite" if i else "create",
            enable_v2_manifest_paths=v2,
        )
        sums[i + 1] = sum(rows)
    return sums


def total(dataset: object) -> int:
    column = dataset.to_table().column("x")  # type: ignore[attr-defined]
    return int(sum(column.to_pylist()))


@pytest.mark.parametrize(
    ("key", "entry"),
    [
        ("_versions/1.manifest", ("v1", 1)),
        ("_versions/12.manifest", ("v1", 12)),
        ("_versions/18446744073709551614.manifest", ("v2", 1)),
        ("_versions/007.manifest", None),
        ("_versions/d3.manifest", None),
        ("_versions/.tmp-1.manifest", None),
        ("_versions/latest_version_hint.json", None),
    ],
)
def test_manifest_naming(key: str, entry: tuple[hl.LanceNaming, int] | None) -> None:
    assert hl.classify_versions_key(key) == entry
    if entry is not None:
        assert hl.lance_manifest_key(entry[0], entry[1]) == key


@pytest.mark.parametrize("v2", [True, False])
def test_naming_is_detected_from_the_table(tmp_path: Path, v2: bool) -> None:
    uri = str(tmp_path / "t.lance")
    table(uri, 2, v2=v2)
    assert hl.detect_naming(holdfast.LocalStore(uri)) == ("v2" if v2 else "v1")


def test_lances_own_cleanup_deletes_the_version_under_a_pylance_reader(tmp_path: Path) -> None:
    uri = str(tmp_path / "t.lance")
    table(uri)
    reader = lance.dataset(uri, version=1)
    lance.dataset(uri).cleanup_old_versions(older_than=timedelta(0), delete_unverified=True)
    with pytest.raises((OSError, ValueError), match=r"[Nn]ot found"):
        reader.to_table()


def test_a_reader_that_lost_its_lease_learns_it_before_reading(tmp_path: Path) -> None:
    uri = str(tmp_path / "t.lance")
    table(uri, 2)
    store = holdfast.LocalStore(uri)
    with hl.checkout(uri, version=1, ttl=3) as co:
        store.delete(co.lease.key)  # e.g. a forced branch deletion took the lease away
        assert co.lost.wait(4.0)
        with pytest.raises(HoldfastError, check=lambda e: e.code == "LEASE_LOST"):
            _ = co.dataset
    time.sleep(0)  # the context exits cleanly after a loss (release is best effort)
