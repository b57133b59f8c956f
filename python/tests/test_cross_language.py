"""Python and TypeScript on one dataset, on real stores (local disk, Ceph RGW, Azurite):
Python readers hold leases while the TypeScript cleanup runs, leases taken in one language
are renewed and released from the other, and Python acquires race a TypeScript retirement
(docs/protocol.md §4; invariant 1)."""

from __future__ import annotations

import json
import subprocess
import threading
from pathlib import Path
from typing import Any

import pytest

import holdfast
from helpers import kept_entries
from holdfast.errors import HoldfastError
from peer import CLI, cli, node, ts
from stores import CLI_STORE_KINDS, open_store, peer_spec, storage_url


@pytest.fixture(params=CLI_STORE_KINDS)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> holdfast.ObjectStore:
    return open_store(str(request.param), tmp_path)


@pytest.fixture(params=CLI_STORE_KINDS)
def any_store(request: pytest.FixtureRequest, tmp_path: Path) -> holdfast.ObjectStore:
    """A store with version 1 written straight to it (no CLI). GCS is not among them: the
    TypeScript GCS backend's probe refuses the test fake-gcs-server at the moment."""
    s = open_store(str(request.param), tmp_path)
    # The dataset marker, as the TypeScript initDataset writes it: a holdfast-format operation
    # refuses a store without it (docs/protocol.md §1.1).
    marker = {
        "schema": 1,
        "format": "holdfast",
        "datasetId": "01JDATASET0000000000000000",
        "writerId": "01JDATASET0000000000000001",
        "defaultBranch": "main",
    }
    s.put("_holdfast/dataset.json", (json.dumps(marker, separators=(",", ":")) + "\n").encode())
    s.put(holdfast.manifest_key("main", 1), b"{}")
    return s


def dataset(store: holdfast.ObjectStore, tmp_path: Path, versions: int) -> list[str]:
    """A holdfast dataset with ``versions`` versions, committed by the TypeScript CLI."""
    url = storage_url(store)
    cli("init", *url)
    part = tmp_path / "part.bin"
    for n in range(versions):
        part.write_bytes(f"version {n + 1}\n".encode())
        cli("commit", *url, str(part))
    return url


def cleanup(url: list[str], *extra: str) -> dict[str, Any]:
    done = cli(
        "cleanup",
        *url,
        "--retain",
        "1",
        "--min-age",
        "0s",
        "--orphan-grace",
        "0s",
        "--no-writer-active",
        "--json",
        *extra,
    )
    answer: dict[str, Any] = json.loads(done.stdout)
    return answer


def present(store: holdfast.ObjectStore, version: int) -> bool:
    return store.head(holdfast.manifest_key("main", version)) is not None


def test_l1_a_python_lease_keeps_its_version_through_the_typescript_cleanup(
    store: holdfast.ObjectStore, tmp_path: Path
) -> None:
    url = dataset(store, tmp_path, 3)
    with holdfast.lease(store, version=1, ttl=60) as held:
        stats = cleanup(url)["stats"]
        assert {"branch": "main", "version": 1, "reason": "lease"} in kept_entries(stats)
        assert present(store, 1)
        held.check()
        assert store.get(held.lease.key) is not None
    assert not present(store, 2)  # retired: no lease
    cleanup(url)
    assert not present(store, 1)  # the lease ended: retired by the next cleanup
    assert list(holdfast.list(store)) == []


def test_a_typescript_lease_is_renewed_and_released_from_python(
    any_store: holdfast.ObjectStore,
) -> None:
    store = any_store
    handle = ts(
        {
            "op": "acquire",
            "store": peer_spec(store),
            "branch": "main",
            "version": 1,
            "ttlMs": 60_000,
        }
    )
    lease = holdfast.Lease.from_dict(handle)
    renewed = holdfast.renew(store, lease)
    assert renewed.renewal == 1
    listed = ts({"op": "list-leases", "store": peer_spec(store)})
    assert [e["leaseId"] for e in listed] == [lease.lease_id]
    holdfast.release(store, renewed)
    assert ts({"op": "list-leases", "store": peer_spec(store)}) == []


def test_a_python_lease_is_renewed_and_released_from_typescript(
    any_store: holdfast.ObjectStore,
) -> None:
    store = any_store
    lease = holdfast.acquire(store, version=1, ttl=60)
    renewed = ts({"op": "renew", "store": peer_spec(store), "lease": lease.to_dict()})
    assert renewed["renewal"] == 1
    again = holdfast.renew(store, holdfast.Lease.from_dict(renewed))  # and back in Python
    assert again.renewal == 2
    ts({"op": "release", "store": peer_spec(store), "lease": again.to_dict()})
    assert list(holdfast.list(store)) == []


def test_a_forged_handle_from_the_other_language_is_refused(
    any_store: holdfast.ObjectStore,
) -> None:
    store = any_store
    lease = holdfast.acquire(store, version=1, ttl=60)
    forged = {**lease.to_dict(), "secret": "A" * 43}
    answer = ts({"op": "release", "store": peer_spec(store), "lease": forged}, check=False)
    assert answer["kind"] == "invalid-input"
    assert store.get(lease.key) is not None
    holdfast.release(store, lease)


def test_l1_python_acquires_racing_a_typescript_retirement_never_lose_their_version(
    store: holdfast.ObjectStore, tmp_path: Path
) -> None:
    """Versions 1 and 2 are leased just before the TypeScript cleanup starts; versions 3-5
    are acquired again and again from the moment its drain record appears until it ends
    (drain, censuses, seal, commit, deletes, finalize). Every acquire that returned a lease
    finds its version afterwards, no retired version was leased, and every refused acquire
    removed its own lease."""
    url = dataset(store, tmp_path, 6)
    early = [holdfast.acquire(store, version=v, ttl=120) for v in (1, 2)]
    policy = ["--retain", "1", "--min-age", "0s", "--orphan-grace", "0s", "--no-writer-active"]
    run = subprocess.Popen(
        [node(), str(CLI), "cleanup", *url, *policy, "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    held: list[holdfast.Lease] = list(early)
    refused: list[HoldfastError] = []
    guard = threading.Lock()
    drained = threading.Event()

    def watch() -> None:
        while run.poll() is None and not drained.is_set():
            if store.list("_holdfast/retirement/main/").objects:
                drained.set()
            threading.Event().wait(0.005)
        drained.set()

    def racer(version: int) -> None:
        drained.wait()
        while run.poll() is None:
            try:
                lease = holdfast.acquire(store, version=version, ttl=120)
            except HoldfastError as error:
                with guard:
                    refused.append(error)
                if error.code == "VERSION_NOT_FOUND":
                    return
                continue
            with guard:
                held.append(lease)
            return

    threads = [threading.Thread(target=watch)] + [
        threading.Thread(target=racer, args=(v,)) for v in (3, 4, 5)
    ]
    for thread in threads:
        thread.start()
    out, err = run.communicate(timeout=300)
    for thread in threads:
        thread.join()
    assert run.returncode == 0, err
    assert {e.code for e in refused} <= {"RETIRING", "SEALED", "COMMITTED", "VERSION_NOT_FOUND"}
    stats = json.loads(out)["stats"]
    retired = {r["version"] for r in stats["retired"]}
    leased = {lease.version for lease in held}
    for version in leased:
        assert present(store, version), f"version {version} was retired under a lease"
    assert not (retired & leased)
    assert {1, 2} <= {r["version"] for r in stats["retained"] if r["reason"] == "lease"}
    # Refused acquires removed their own leases: only the held ones remain.
    assert {e.key for e in holdfast.list(store)} == {lease.key for lease in held}
    for lease in held:
        holdfast.release(store, lease)
