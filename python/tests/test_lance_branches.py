"""Lance branches held by leases from Python (docs/lance.md, "Lance branches"): a checkout of
a branch version reads ``tree/{branch}/_versions/`` in the branch's own naming, leases the
version on the holdfast branch the TypeScript format names it with (``dev``; ``dev..sub``
for ``dev/sub``), keeps it through a TypeScript cleanup of that branch, and the version is
retired by the first cleanup after the lease ends (invariant 1, docs/protocol.md §4). On
local disk, Ceph RGW and Azurite, through the built CLI."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import lance
import pytest

import holdfast
import holdfast.lance as hl
from helpers import kept_entries
from holdfast.errors import HoldfastError
from lance_tables import (
    LanceSite,
    branch_table,
    cleanup_policy,
    decode_stats,
    keys,
    lance_site,
    total,
)
from peer import cli, ts
from stores import CLI_STORE_KINDS


def cleanup(site: LanceSite) -> dict[str, Any]:
    return decode_stats(cli("cleanup", *site.url, *cleanup_policy(), "--json").stdout)


def retired(stats: dict[str, Any], branch: str) -> set[int]:
    return {r["version"] for r in stats["retired"] if r["branch"] == branch}


def branch_version(site: LanceSite, branch: str, version: int) -> Any:
    return lance.dataset(site.uri, storage_options=site.options).checkout_version((branch, version))


BRANCH_CASES = [
    # (Lance branch, holdfast branch, leased version, a version retired meanwhile, latest)
    ("dev", "dev", 4, 5, 6),
    ("dev/sub", "dev..sub", 4, 3, 5),
]


@pytest.mark.parametrize("kind", CLI_STORE_KINDS)
@pytest.mark.parametrize(("branch", "name", "leased", "other", "latest"), BRANCH_CASES)
def test_l1_a_python_checkout_of_a_branch_version_survives_a_typescript_cleanup_of_it(
    kind: str, branch: str, name: str, leased: int, other: int, latest: int, tmp_path: Path
) -> None:
    site = lance_site(kind, tmp_path)
    sums = branch_table(site)
    opts = site.options
    with hl.checkout(site.uri, version=leased, branch=branch, ttl=60, storage_options=opts) as co:
        assert co.lease.branch == name
        assert co.lease.key.startswith(f"_holdfast/leases/{name}/{leased:020d}/")
        assert co.lease.manifest_key == hl.lance_manifest_key("v2", leased, branch)
        stats = cleanup(site)
        assert {"branch": name, "version": leased, "reason": "lease"} in kept_entries(stats)
        assert other in retired(stats, name)  # the same cleanup retired unleased versions
        assert co.dataset.version == leased
        assert total(co.dataset) == sums[(branch, leased)]
    assert keys(site.store, "_holdfast/leases/") == []  # released on exit
    stats = cleanup(site)
    assert leased in retired(stats, name)  # the lease ended: the first cleanup retires it
    with pytest.raises((OSError, ValueError), match=r"[Nn]ot found"):
        branch_version(site, branch, leased)
    with (
        pytest.raises(HoldfastError, check=lambda e: e.code == "VERSION_NOT_FOUND"),
        hl.checkout(site.uri, version=leased, branch=branch, ttl=60, storage_options=opts),
    ):
        pass
    assert total(branch_version(site, branch, latest)) == sums[(branch, latest)]
    assert total(lance.dataset(site.uri, storage_options=opts)) == sums[("main", 4)]


def test_each_branch_has_its_own_naming(tmp_path: Path) -> None:
    """A V1 table whose branch pylance names V2: main's manifests are ``{N}.manifest``, dev's
    ``{u64::MAX - N:020}.manifest`` under ``tree/dev/_versions/``; each checkout proves its
    version by its own branch's manifest."""
    site = lance_site("local", tmp_path)
    sums = branch_table(site, v2=False)
    assert hl.detect_naming(site.store) == "v1"
    assert hl.detect_naming(site.store, "dev") == "v2"
    assert hl.detect_naming(site.store, "dev/sub") == "v2"
    with hl.checkout(site.uri, version=3, ttl=30) as main:
        assert (main.naming, main.lease.manifest_key) == ("v1", "_versions/3.manifest")
        assert total(main.dataset) == sums[("main", 3)]
    with hl.checkout(site.uri, version=3, branch="dev", ttl=30) as dev:
        assert dev.naming == "v2"
        assert dev.lease.manifest_key == "tree/dev/_versions/18446744073709551612.manifest"
        assert total(dev.dataset) == sums[("dev", 3)]


def test_a_nested_branch_is_leased_under_its_holdfast_name(tmp_path: Path) -> None:
    """``dev/sub`` lives in ``tree/dev/sub/`` and is holdfast's branch ``dev..sub``: the lease
    key and body name ``dev..sub``, the manifest is ``dev/sub``'s own, and the dataset is
    pylance's checkout of ``dev/sub`` at that version."""
    site = lance_site("local", tmp_path)
    sums = branch_table(site)
    with hl.checkout(site.uri, version=4, branch="dev/sub", ttl=30) as co:
        assert co.lease.branch == "dev..sub"
        assert co.lease.key.startswith("_holdfast/leases/dev..sub/00000000000000000004/")
        assert co.lease.manifest_key == hl.lance_manifest_key("v2", 4, "dev/sub")
        assert [e.key for e in holdfast.list(site.store, branch="dev..sub")] == [co.lease.key]
        assert total(co.dataset) == sums[("dev/sub", 4)]


NAME_CASES = [
    ("dev", "dev"),
    ("dev/sub", "dev..sub"),
    ("a.b-c_d/e_f/g-h", "a.b-c_d..e_f..g-h"),
    ("_x/y", "_x..y"),
    ("x-/y", "x-..y"),
    (".hidden", None),
    ("a./b", None),
    ("a/.b", None),
    ("-a/b", None),
    ("a/-b", "a..-b"),
    ("\u00fc", None),
    ("a" * 129, None),
    ("a/" + "b" * 126, None),
    ("a/" + "b" * 125, "a.." + "b" * 125),
]


@pytest.mark.parametrize(("lance_name", "holdfast_name"), NAME_CASES)
def test_lance_branch_names_map_to_holdfast_names(
    lance_name: str, holdfast_name: str | None
) -> None:
    assert hl.holdfast_branch_name(lance_name) == holdfast_name


MAPPED_NAMES = [
    *(case[0] for case in NAME_CASES),
    "a/b/c",
    "team-1/feature_x.v2",
    "a/b.",
    "\u00fc/\u00e4",
    "a/" + "b" * 127,
    "x..y",
    "dev/sub/deeper/still",
    "9/8",
    "a.b",
    "a-",
    "_",
]


def test_lance_branch_names_map_as_the_typescript_format_maps_them() -> None:
    """The lease branch of a Lance branch is the one the TypeScript format's census counts
    (format-lance holdfastBranchName), name for name."""
    answer = ts({"op": "lance-branch-names", "names": MAPPED_NAMES})
    assert answer == [hl.holdfast_branch_name(n) for n in MAPPED_NAMES]


def test_a_branch_reader_that_lost_its_lease_learns_it_before_it_reads_files_that_may_be_gone(
    tmp_path: Path,
) -> None:
    """The lease is taken away (a forced deletion); the keeper's next renewal finds it gone
    and the checkout is lost; a TypeScript cleanup then retires the version and deletes its
    files; the reader's next ``co.dataset`` raises before it reads any of them."""
    site = lance_site("local", tmp_path)
    branch_table(site)
    with hl.checkout(site.uri, version=4, branch="dev", ttl=3) as co:
        site.store.delete(co.lease.key)
        assert co.lost.wait(4.0)
        stats = cleanup(site)
        assert 4 in retired(stats, "dev")
        with pytest.raises(HoldfastError, check=lambda e: e.code == "LEASE_LOST"):
            _ = co.dataset
        with pytest.raises(HoldfastError, check=lambda e: e.code == "LEASE_LOST"):
            co.check()


def test_a_branch_reader_whose_renewals_fail_is_fenced_before_its_lease_can_expire(
    tmp_path: Path,
) -> None:
    """No renewal lands (the store stops answering writes): the keeper's fence fires on the
    local clock before the lease's TTL runs out, so ``co.dataset`` raises LEASE_FENCED while
    the version is still protected."""
    from helpers import FaultStore

    site = lance_site("local", tmp_path)
    branch_table(site)
    store = FaultStore(site.store)
    with hl.checkout(site.uri, version=4, branch="dev", ttl=2, store=store) as co:
        store.lose("put", "_holdfast/leases/", times=1_000)  # every renewal's answer lost
        assert co.lost.wait(3.0)
        assert store.head(co.lease.key) is not None  # the lease object is still there
        with pytest.raises(HoldfastError, check=lambda e: e.code == "LEASE_FENCED"):
            _ = co.dataset


def lancedb_table(site: LanceSite) -> tuple[str, dict[tuple[str, int], int]]:
    """A LanceDB table ``events`` under the site's folder: main 1-3, ``dev`` forked from
    main@2 with two commits (dev 2-4). Answers the database URI and the sums of x."""
    import lancedb
    import pyarrow as pa

    db_uri = site.uri.rsplit("/", 1)[0]
    db = lancedb.connect(db_uri, storage_options=site.options)
    table = db.create_table("events", pa.table({"x": [1, 2, 3]}))
    table.add(pa.table({"x": [4]}))
    table.add(pa.table({"x": [5]}))
    dev = table.branches.create("dev", from_version=2)
    dev.add(pa.table({"x": [100]}))
    dev.add(pa.table({"x": [200]}))
    sums = {("main", 3): 15, ("dev", 2): 10, ("dev", 3): 110, ("dev", 4): 310}
    return db_uri, sums


@pytest.mark.parametrize("kind", CLI_STORE_KINDS)
def test_l1_a_lancedb_table_checked_out_on_a_branch_survives_a_typescript_cleanup(
    kind: str, tmp_path: Path
) -> None:
    site = lance_site(kind, tmp_path, name="events")
    db_uri, sums = lancedb_table(site)
    with hl.checkout_table(
        db_uri, "events", version=3, branch="dev", ttl=60, storage_options=site.options
    ) as co:
        assert co.lease.key.startswith("_holdfast/leases/dev/00000000000000000003/")
        stats = cleanup(site)
        assert {"branch": "dev", "version": 3, "reason": "lease"} in kept_entries(stats)
        assert 2 in retired(stats, "dev")
        assert (co.table.version, total(co.table)) == (3, sums[("dev", 3)])
        assert co.table.current_branch() == "dev"
    stats = cleanup(site)
    assert 3 in retired(stats, "dev")
    with (
        pytest.raises(HoldfastError, check=lambda e: e.code == "VERSION_NOT_FOUND"),
        hl.checkout_table(
            db_uri, "events", version=3, branch="dev", ttl=60, storage_options=site.options
        ),
    ):
        pass
    with hl.checkout_table(
        db_uri, "events", version=3, ttl=60, storage_options=site.options
    ) as main:
        assert total(main.table) == sums[("main", 3)]


def test_a_lancedb_reader_that_lost_its_lease_learns_it_before_reading(tmp_path: Path) -> None:
    site = lance_site("local", tmp_path, name="events")
    db_uri, _ = lancedb_table(site)
    import lancedb

    db = lancedb.connect(db_uri)
    with hl.checkout_table(db, "events", version=3, branch="dev", ttl=3) as co:
        site.store.delete(co.lease.key)
        assert co.lost.wait(4.0)
        with pytest.raises(HoldfastError, check=lambda e: e.code == "LEASE_LOST"):
            _ = co.table
