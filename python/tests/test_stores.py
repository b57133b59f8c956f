"""Leases on the real stores: a local folder, Ceph RGW (S3) and Azurite (Azure Blob)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import holdfast
from holdfast.errors import HoldfastError
from holdfast.s3 import S3Store
from stores import STORE_KINDS, open_store


@pytest.fixture(params=STORE_KINDS)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> holdfast.ObjectStore:
    s = open_store(str(request.param), tmp_path)
    s.put(holdfast.manifest_key("main", 1), b"{}")
    return s


def record(version: int, state: str) -> bytes:
    return holdfast.storage_time.encode_json(
        {
            "schema": 1,
            "opId": "OP1",
            "writerId": "01ARZ3NDEKTSV4RRFFQ69G5FAY",
            "owner": "01ARZ3NDEKTSV4RRFFQ69G5FAZ",
            "branch": "main",
            "state": state,
            "ownershipBoundMs": 60_000,
            "versions": [{"version": version, "manifestEtag": "e", "cancelled": False}],
        }
    )


def test_lease_lifecycle(store: holdfast.ObjectStore) -> None:
    lease = holdfast.acquire(store, version=1, ttl=30)
    stored = store.get(lease.key)
    assert stored is not None
    assert stored.etag == lease.etag
    assert json.loads(stored.body)["proof"] == holdfast.lease_proof(
        lease.secret, lease.lease_id, 0, lease.writer_id
    )
    renewed = holdfast.renew(store, lease)
    assert renewed.etag != lease.etag  # fresh bytes: a new ETag even where it is the content MD5
    assert [
        e.lease_id for e in holdfast.list(store, branch="main", version=1, read_bodies=True)
    ] == [lease.lease_id]
    # The old handle: a conflict, and its own later write (renewal 1) is adopted.
    assert holdfast.renew(store, lease).renewal == 2
    holdfast.release(store, lease)
    assert store.get(lease.key) is None
    holdfast.release(store, lease)  # idempotent


def test_a_sealed_record_refuses_acquire_and_renew(store: holdfast.ObjectStore) -> None:
    lease = holdfast.acquire(store, version=1, ttl=30)
    store.put(holdfast.retirement_key("main", 1, 1, "OP1"), record(1, "sealed"))
    with pytest.raises(HoldfastError, check=lambda e: e.code == "SEALED"):
        holdfast.renew(store, lease)
    with pytest.raises(HoldfastError, check=lambda e: e.code == "SEALED"):
        holdfast.acquire(store, version=1, ttl=30)
    assert [e.key for e in holdfast.list(store)] == [lease.key]  # the refused one is gone


def test_a_forged_rewrite_is_lost_not_adopted(store: holdfast.ObjectStore) -> None:
    lease = holdfast.acquire(store, version=1, ttl=30)
    forged = holdfast.encode_lease_body(
        "A" * 43,
        lease_id=lease.lease_id,
        branch="main",
        version=1,
        ttl_ms=30_000,
        renewal=3,
        writer_id=lease.writer_id,
    )
    store.put(lease.key, forged)
    with pytest.raises(HoldfastError, check=lambda e: e.code == "LEASE_LOST"):
        holdfast.renew(store, lease)
    if store.capabilities.atomic_conditional_delete:
        with pytest.raises(HoldfastError, check=lambda e: e.code == "LEASE_LOST"):
            holdfast.release(store, lease)
        assert store.get(lease.key) is not None


def test_storage_now_is_the_stores_own_stamp(store: holdfast.ObjectStore) -> None:
    before = holdfast.storage_now(holdfast.Context(store=store))
    after = holdfast.storage_now(holdfast.Context(store=store))
    assert after >= before
    assert list(holdfast.store.list_all(store, "_holdfast/clock/")) == []


def test_open_s3_store_detects_what_rgw_does(tmp_path: Path) -> None:
    s3 = open_store("s3", tmp_path)
    assert isinstance(s3, S3Store)
    # Ceph RGW: compare-and-swap works with a bare If-Match, DELETE ignores If-Match.
    assert s3.capabilities.atomic_conditional_update
    assert not s3.capabilities.atomic_conditional_delete
    assert not s3._quote
    with pytest.raises(HoldfastError, check=lambda e: e.kind == "unsupported"):
        s3.delete("k", if_match="e")
