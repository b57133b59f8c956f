"""The failure of docs/lance.md, "The failure this prevents", solved: a pylance reader
holding an old version through ``holdfast.lance.checkout`` while holdfast's cleanup (the
TypeScript CLI) runs."""

from __future__ import annotations

import json
from pathlib import Path

import lance
import pytest

import holdfast.lance as hl
from helpers import kept_entries
from holdfast.errors import HoldfastError
from lance_tables import cleanup_policy, decode_stats, lance_site, overwrite_table
from peer import cli
from stores import CLI_STORE_KINDS
from test_lance import table, total


def holdfast_cleanup(uri: str) -> dict[str, object]:
    done = cli(
        "cleanup",
        uri,
        "--retain",
        "1",
        "--min-age",
        "0s",
        "--orphan-grace",
        "0s",
        "--no-writer-active",
        "--json",
    )
    stats: dict[str, object] = json.loads(done.stdout)["stats"]
    return stats


@pytest.mark.parametrize("v2", [True, False])
def test_with_checkout_and_holdfasts_cleanup_the_read_succeeds(tmp_path: Path, v2: bool) -> None:
    uri = str(tmp_path / "t.lance")
    sums = table(uri, v2=v2)
    with hl.checkout(uri, version=1, ttl=60) as co:
        assert co.naming == ("v2" if v2 else "v1")
        stats = holdfast_cleanup(uri)
        assert {"branch": "main", "version": 1, "reason": "lease"} in kept_entries(stats)
        assert total(co.dataset) == sums[1]
    with pytest.raises((OSError, ValueError), match=r"[Nn]ot found"):
        lance.dataset(uri, version=2)  # no lease: retired by that cleanup
    holdfast_cleanup(uri)  # the lease ended: version 1 goes now
    with pytest.raises((OSError, ValueError), match=r"[Nn]ot found"):
        lance.dataset(uri, version=1)
    with (
        pytest.raises(HoldfastError, check=lambda e: e.code == "VERSION_NOT_FOUND"),
        hl.checkout(uri, version=1, ttl=60),
    ):
        pass
    assert total(lance.dataset(uri)) == sums[4]


@pytest.mark.parametrize("kind", CLI_STORE_KINDS)
def test_l1_a_python_checkout_keeps_its_version_through_a_typescript_cleanup_on_each_store(
    kind: str, tmp_path: Path
) -> None:
    """The same on local disk, Ceph RGW and Azurite: pylance writes the table through its
    storage options, the checkout opens the store from the same options, the CLI cleans the
    table's URL; the first cleanup after the lease ends retires the version."""
    site = lance_site(kind, tmp_path)
    sums = overwrite_table(site, 3)
    policy = [*cleanup_policy(), "--json"]
    with hl.checkout(site.uri, version=1, ttl=60, storage_options=site.options) as co:
        stats = decode_stats(cli("cleanup", *site.url, *policy).stdout)
        assert {"branch": "main", "version": 1, "reason": "lease"} in kept_entries(stats)
        assert {r["version"] for r in stats["retired"]} == {2}
        assert total(co.dataset) == sums[("main", 1)]
    stats = decode_stats(cli("cleanup", *site.url, *policy).stdout)
    assert {r["version"] for r in stats["retired"]} == {1}
    with pytest.raises((OSError, ValueError), match=r"[Nn]ot found"):
        lance.dataset(site.uri, version=1, storage_options=site.options)
    assert total(lance.dataset(site.uri, storage_options=site.options)) == sums[("main", 3)]
