"""The HTTP client against a real ``holdfast serve`` (the built CLI) on a local dataset."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

import holdfast
from holdfast.errors import HoldfastError
from holdfast.http import HttpLeases
from peer import CLI, cli, node


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[HttpLeases, holdfast.LocalStore]]:
    root = tmp_path / "ds"
    cli("init", str(root))
    part = tmp_path / "part.bin"
    for n in range(2):
        part.write_bytes(f"v{n}".encode())
        cli("commit", str(root), str(part))
    server = subprocess.Popen(
        [node(), str(CLI), "serve", str(root), "--port", "0", "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        started = json.loads(server.stdout.readline())
        info = started.get("result", started)
        client = HttpLeases(info["url"], info["datasets"][0], info["adminToken"])
        yield client, holdfast.LocalStore(root)
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_acquire_renew_list_release(served: tuple[HttpLeases, holdfast.LocalStore]) -> None:
    client, store = served
    lease = client.acquire(version=1, ttl=30)
    assert [e.lease_id for e in holdfast.list(store)] == [lease.lease_id]  # on the store itself
    renewed = client.renew(lease)
    assert renewed.renewal == 1
    # The old handle again: the server adopts its own later write (renewal 1) and renews on.
    assert client.renew(lease).renewal == 2
    assert [entry["leaseId"] for entry in client.list(version=1)] == [lease.lease_id]
    client.release(renewed)
    client.release(renewed)  # idempotent
    assert list(holdfast.list(store)) == []


def test_errors_keep_their_kind_and_code(served: tuple[HttpLeases, holdfast.LocalStore]) -> None:
    client, _ = served
    with pytest.raises(
        HoldfastError, check=lambda e: e.kind == "not-found" and e.code == "VERSION_NOT_FOUND"
    ):
        client.acquire(version=9, ttl=30)
    with pytest.raises(HoldfastError, check=lambda e: e.kind == "invalid-input"):
        client.acquire(version=1, ttl_ms=50)


def test_the_context_manager_renews_and_releases(
    served: tuple[HttpLeases, holdfast.LocalStore],
) -> None:
    client, store = served
    with client.lease(version=2, ttl=3) as held:
        import time

        time.sleep(2.4)  # renewals every second; the fence would fire at 2.25 s without them
        assert held.check().renewal >= 2
        assert not held.lost.is_set()
    assert list(holdfast.list(store)) == []


def test_a_lost_lease_is_surfaced(served: tuple[HttpLeases, holdfast.LocalStore]) -> None:
    client, store = served
    with client.lease(version=2, ttl=3) as held:
        store.delete(held.lease.key)
        assert held.lost.wait(4.0)
        with pytest.raises(HoldfastError, check=lambda e: e.code == "LEASE_LOST"):
            held.check()
