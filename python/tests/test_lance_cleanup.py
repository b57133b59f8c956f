"""The seed failure, solved: a pylance reader holding an old version through
``holdfast.lance.checkout`` while holdfast's cleanup (the TypeScript CLI) runs."""

from __future__ import annotations

import json
from pathlib import Path

import lance
import pytest

import holdfast.lance as hl
from holdfast.errors import HoldfastError
from peer import cli
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
def test_seed_with_checkout_and_holdfasts_cleanup_the_read_succeeds(
    tmp_path: Path, v2: bool
) -> None:
    uri = str(tmp_path / "t.lance")
    sums = table(uri, v2=v2)
    with hl.checkout(uri, version=1, ttl=60) as co:
        assert co.naming == ("v2" if v2 else "v1")
        stats = holdfast_cleanup(uri)
        assert {"branch": "main", "version": 1, "reason": "lease"} in stats["retained"]  # type: ignore[operator]
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


def test_seed_on_rgw_with_checkout_and_holdfasts_cleanup_the_read_succeeds() -> None:
    """The same on Ceph RGW: pylance writes the table through its S3 storage options, the
    checkout opens the store from the same options, the CLI cleans the s3:// URL."""
    import secrets

    import pyarrow as pa

    from stores import need, s3_options

    s3 = s3_options()
    opts = {
        "aws_endpoint": s3["endpoint"],
        "aws_access_key_id": need("AWS_ACCESS_KEY_ID"),
        "aws_secret_access_key": need("AWS_SECRET_ACCESS_KEY"),
        "aws_region": s3["region"],
        "allow_http": "true",
        "aws_virtual_hosted_style_request": "false",
    }
    uri = f"s3://{need('HOLDFAST_S3_BUCKET')}/py-lance-{secrets.token_hex(5)}/t.lance"
    for i in range(3):
        rows = pa.table({"x": list(range(i * 10, i * 10 + 10))})
        lance.write_dataset(rows, uri, mode="overwrite" if i else "create", storage_options=opts)
    url = [uri, "--endpoint", s3["endpoint"], "--region", s3["region"], "--path-style"]
    policy = ["--retain", "1", "--min-age", "0s", "--orphan-grace", "0s", "--no-writer-active"]
    with hl.checkout(uri, version=1, ttl=60, storage_options=opts) as co:
        stats = json.loads(cli("cleanup", *url, *policy, "--json").stdout)["stats"]
        assert {"branch": "main", "version": 1, "reason": "lease"} in stats["retained"]
        assert co.dataset.to_table().column("x").to_pylist() == list(range(10))
    json.loads(cli("cleanup", *url, *policy, "--json").stdout)
    with pytest.raises((OSError, ValueError), match=r"[Nn]ot found"):
        lance.dataset(uri, version=1, storage_options=opts)
