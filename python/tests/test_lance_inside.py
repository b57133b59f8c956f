"""A URI inside a table is never a table, and bad checkout inputs are typed refusals that
write nothing (docs/lance.md, "Where a table is"; docs/guarantees.md, invariant 9).

On a table pylance 14 wrote with branches (main 1-4, ``dev`` 2-6, ``dev/sub`` 3-5): a
checkout given the branch's own folder ``t.lance/tree/dev`` (or ``_versions/``, ``data/``,
an index folder, ``_holdfast/``, the folder holding the table) is ``invalid-input``
INSIDE_TABLE / HOLDS_TABLE naming the table's root, and no object of the table changes.
Without the refusal such a checkout leased dev@3 under ``tree/dev/_holdfast/``, where the
table's cleanup never looks, and the table's cleanup then retired dev@3 under the reader.
"""

from __future__ import annotations

import os
from pathlib import Path

import lancedb
import pytest

import holdfast
import holdfast.lance as hl
from holdfast.errors import HoldfastError
from lance_tables import LanceSite, branch_table, cleanup_policy, lance_site, total
from peer import cli

INDEX = "_indices/8096bd55-70a0-43e6-a1e5-4a3c2c243300"


def snapshot(site: LanceSite) -> list[tuple[str, str]]:
    """Every object of the table with its ETag: what a refused call must leave as it was."""
    return sorted((m.key, m.etag) for m in holdfast.store.list_all(site.store, ""))


def inside(site: LanceSite, path: str) -> str:
    return f"{site.uri}/{path}"


def refused(error: pytest.ExceptionInfo[HoldfastError], code: str, root: str) -> None:
    assert error.value.kind == "invalid-input", error.value
    assert error.value.code == code
    assert error.value.key == root


@pytest.mark.parametrize("kind", ["local", "s3"])
def test_a_checkout_through_a_branch_folder_is_refused_naming_the_table_and_the_branch(
    kind: str, tmp_path: Path
) -> None:
    site = lance_site(kind, tmp_path)
    branch_table(site)
    before = snapshot(site)
    with (
        pytest.raises(HoldfastError) as error,
        hl.checkout(inside(site, "tree/dev"), version=3, ttl=30, storage_options=site.options),
    ):
        pass
    refused(error, "INSIDE_TABLE", site.uri)
    assert error.value.hint is not None
    assert 'branch="dev"' in error.value.hint
    assert snapshot(site) == before


@pytest.mark.parametrize(
    "path", ["tree/dev/sub", "tree/dev/_versions", "_versions", "data", INDEX, "_holdfast"]
)
def test_a_checkout_through_a_folder_inside_the_table_is_refused(path: str, tmp_path: Path) -> None:
    site = lance_site("local", tmp_path)
    branch_table(site)
    before = snapshot(site)
    with (
        pytest.raises(HoldfastError) as error,
        hl.checkout(inside(site, path), version=3, ttl=30),
    ):
        pass
    refused(error, "INSIDE_TABLE", site.uri)
    assert snapshot(site) == before
    assert not os.path.exists(os.path.join(site.uri, path, "_holdfast"))


def test_a_checkout_of_the_folder_holding_the_table_is_refused(tmp_path: Path) -> None:
    site = lance_site("local", tmp_path)
    branch_table(site)
    before = snapshot(site)
    parent = os.path.dirname(site.uri)
    with pytest.raises(HoldfastError) as error, hl.checkout(parent, version=3, ttl=30):
        pass
    refused(error, "HOLDS_TABLE", site.uri)
    assert snapshot(site) == before
    assert sorted(os.listdir(parent)) == ["t.lance"]


def test_a_cli_cleanup_through_a_branch_folder_leaves_a_python_reader_its_version(
    tmp_path: Path,
) -> None:
    """The issue's case: a Python reader holds dev@5 (through the table's URI); ``holdfast
    cleanup t.lance/tree/dev --retain 1`` is refused (exit 2) and deletes nothing, so the
    reader's next read returns what it read before."""
    site = lance_site("local", tmp_path)
    sums = branch_table(site)
    with hl.checkout(site.uri, version=5, branch="dev", ttl=60) as co:
        before = snapshot(site)
        run = cli("cleanup", inside(site, "tree/dev"), *cleanup_policy(), "--json", check=False)
        assert run.returncode == 2, run.stdout + run.stderr
        assert '"INSIDE_TABLE"' in run.stdout
        assert snapshot(site) == before
        assert total(co.dataset) == sums[("dev", 5)]


# --- item: Python API inputs are typed refusals that write nothing ---


def test_an_infinite_ttl_is_invalid_input_before_anything_is_read_or_written(
    tmp_path: Path,
) -> None:
    site = lance_site("local", tmp_path)
    branch_table(site)
    before = snapshot(site)
    for ttl in (float("inf"), float("-inf"), float("nan")):
        with pytest.raises(HoldfastError) as error, hl.checkout(site.uri, version=3, ttl=ttl):
            pass
        assert error.value.kind == "invalid-input"
        with pytest.raises(HoldfastError) as direct:
            holdfast.acquire(site.store, version=3, ttl=ttl)
        assert direct.value.kind == "invalid-input"
    assert snapshot(site) == before


def test_a_checkout_of_a_missing_path_is_not_found_and_creates_nothing(tmp_path: Path) -> None:
    missing = tmp_path / "db" / "nothing.lance"
    with pytest.raises(HoldfastError) as error, hl.checkout(str(missing), version=1, ttl=30):
        pass
    assert error.value.kind == "not-found"
    assert not (tmp_path / "db").exists()


def test_a_checkout_of_a_regular_file_is_invalid_input_as_the_cli_says(tmp_path: Path) -> None:
    file = tmp_path / "t.lance"
    file.write_bytes(b"not a table")
    with pytest.raises(HoldfastError) as error, hl.checkout(str(file), version=1, ttl=30):
        pass
    assert (error.value.kind, error.value.code) == ("invalid-input", "NOT_A_DIRECTORY")
    assert file.read_bytes() == b"not a table"
    assert sorted(os.listdir(tmp_path)) == ["t.lance"]
    run = cli("lease", "acquire", str(file), "1", "--ttl", "30s", "--json", check=False)
    assert run.returncode == 2
    assert '"invalid-input"' in run.stdout


def test_a_store_of_another_table_is_refused_so_no_lease_protects_the_wrong_table(
    tmp_path: Path,
) -> None:
    site = lance_site("local", tmp_path)
    other = lance_site("local", tmp_path, "other")
    branch_table(site)
    branch_table(other)
    before, before_other = snapshot(site), snapshot(other)
    with (
        pytest.raises(HoldfastError) as error,
        hl.checkout(site.uri, version=3, ttl=30, store=other.store),
    ):
        pass
    assert (error.value.kind, error.value.code) == ("invalid-input", "STORE_MISMATCH")
    assert snapshot(site) == before
    assert snapshot(other) == before_other
    # The store of the table itself is still accepted.
    with hl.checkout(site.uri, version=3, ttl=30, store=site.store) as co:
        assert co.lease.version == 3


def test_checkout_table_of_an_absent_table_is_not_found_and_writes_nothing(
    tmp_path: Path,
) -> None:
    db_dir = tmp_path / "db"
    db = lancedb.connect(str(db_dir))
    db.create_table("events", data=[{"x": 1}])
    before = sorted(str(p) for p in db_dir.rglob("*"))
    with (
        pytest.raises(HoldfastError) as error,
        hl.checkout_table(str(db_dir), "absent", version=1, ttl=30),
    ):
        pass
    assert (error.value.kind, error.value.code) == ("not-found", "TABLE_NOT_FOUND")
    assert sorted(str(p) for p in db_dir.rglob("*")) == before
