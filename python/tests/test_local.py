"""The local store: the contract, and byte compatibility with ``@holdfast/backends-local``
(same files, ETags, Last-Modified and locks), checked against the TypeScript store itself."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

import holdfast
from holdfast.errors import HoldfastError
from peer import spawn, ts


@pytest.fixture
def store(tmp_path: Path) -> holdfast.LocalStore:
    return holdfast.LocalStore(tmp_path / "root")


def spec(store: holdfast.LocalStore) -> dict[str, str]:
    return {"kind": "local", "root": store.root}


def test_create_only_is_atomic_and_a_second_create_conflicts(store: holdfast.LocalStore) -> None:
    etag = store.put("a/b.json", b"one", precondition=holdfast.IfAbsent())
    with pytest.raises(HoldfastError, check=lambda e: e.kind == "conflict"):
        store.put("a/b.json", b"two", precondition=holdfast.IfAbsent())
    got = store.get("a/b.json")
    assert got is not None
    assert (got.body, got.etag) == (b"one", etag)
    assert Path(store.root, "a", "b.json").read_bytes() == b"one"  # the plain file, no wrapper


def test_compare_and_swap_and_conditional_delete(store: holdfast.LocalStore) -> None:
    first = store.put("k", b"v")
    second = store.put("k", b"v", precondition=holdfast.IfMatch(first))
    assert second != first  # identical bytes, new ETag (R9)
    with pytest.raises(HoldfastError, check=lambda e: e.kind == "conflict"):
        store.put("k", b"w", precondition=holdfast.IfMatch(first))
    with pytest.raises(HoldfastError, check=lambda e: e.kind == "conflict"):
        store.put("absent", b"w", precondition=holdfast.IfMatch(first))
    with pytest.raises(HoldfastError, check=lambda e: e.kind == "conflict"):
        store.delete("k", if_match=first)
    store.delete("k", if_match=second)
    assert store.head("k") is None
    store.delete("k")  # absent: idempotent
    assert not Path(store.root, "absent").exists()


def test_deletes_remove_the_folders_they_empty(store: holdfast.LocalStore) -> None:
    store.put("x/y/z.json", b"1")
    store.delete("x/y/z.json")
    assert not Path(store.root, "x").exists()


def test_listing_is_in_key_order_paged_and_hides_the_private_folder(
    store: holdfast.LocalStore,
) -> None:
    keys = ["p/a", "p/b/c", "p/b/d", "p/ab", "p/é", "q/z"]
    for key in keys:
        store.put(key, key.encode())
    store.put("p/x", b"1", precondition=holdfast.IfMatch(store.put("p/x", b"0")))
    listed = [m.key for m in holdfast.store.list_all(store, "p/")]
    assert listed == sorted(
        [k for k in keys if k.startswith("p/")] + ["p/x"], key=lambda k: k.encode()
    )
    page = store.list("p/", page_size=2)
    assert [m.key for m in page.objects] == ["p/a", "p/ab"]
    assert page.next_page_token is not None
    rest = store.list("p/", page_token=page.next_page_token, page_size=2)
    assert [m.key for m in rest.objects] == ["p/b/c", "p/b/d"]
    assert [m.key for m in store.list("p/", start_after="p/b/d").objects] == ["p/x", "p/é"]
    assert all(not m.key.startswith("_holdfast/.local") for m in holdfast.store.list_all(store, ""))


@pytest.mark.parametrize(
    "key",
    [
        "",
        "/a",
        "a/",
        "a//b",
        "a/../b",
        "a\\b",
        "a\x00b",
        "_holdfast/.local/tmp/x",
        "a/.holdfast-self",
        "x.hfobj",
    ],
)
def test_invariant_6_bad_keys_are_refused_before_touching_the_disk(
    store: holdfast.LocalStore, key: str
) -> None:
    with pytest.raises(HoldfastError, check=lambda e: e.kind == "invalid-input"):
        store.put(key, b"x")
    assert not Path(store.root).exists() or os.listdir(store.root) in ([], ["_holdfast"])


@pytest.mark.parametrize("name", ["keep.json.hfobj", "a\\b", "link"])
def test_invariant_8_a_listing_stops_at_a_file_it_cannot_map_to_a_key(
    store: holdfast.LocalStore, name: str
) -> None:
    store.put("_refs/tags/v1.json", b"{}")
    folder = Path(store.root, "_refs", "tags")
    if name == "link":
        (folder / name).symlink_to(folder / "v1.json")
    else:
        (folder / name).write_bytes(b"{}")
    with pytest.raises(HoldfastError, check=lambda e: e.code == "LOCAL_UNMAPPABLE_NAME"):
        list(holdfast.store.list_all(store, "_refs/"))
    assert [m.key for m in store.list("_versions/").objects] == []  # other ranges unaffected


def test_an_old_wrapped_layout_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "old"
    (root / "_holdfast").mkdir(parents=True)
    (root / "_holdfast" / "dataset.json.hfobj").write_bytes(b"x")
    with pytest.raises(HoldfastError, check=lambda e: e.code == "LOCAL_OLD_LAYOUT"):
        holdfast.LocalStore(root).get("k")


def test_a_key_that_is_also_a_folder_keeps_its_object_in_the_self_file(
    store: holdfast.LocalStore,
) -> None:
    first = store.put("a/b", b"outer")
    store.put("a/b/c", b"inner")  # a/b becomes a folder by one atomic exchange
    got = store.get("a/b")
    assert got is not None
    assert (got.body, got.etag) == (b"outer", first)
    assert Path(store.root, "a", "b", ".holdfast-self").read_bytes() == b"outer"
    assert [m.key for m in holdfast.store.list_all(store, "a/")] == ["a/b", "a/b/c"]
    assert ts({"op": "get", "store": spec(store), "key": "a/b"})["etag"] == first


def test_typescript_and_python_see_the_same_etags_and_stamps(store: holdfast.LocalStore) -> None:
    py_etag = store.put("from-python.json", b'{"a":1}\n')
    seen = ts({"op": "head", "store": spec(store), "key": "from-python.json"})
    meta = store.head("from-python.json")
    assert meta is not None
    assert seen["etag"] == py_etag == meta.etag
    assert seen["lastModified"] == meta.last_modified_ms
    ts_etag = ts(
        {"op": "put", "store": spec(store), "key": "from-ts.json", "body": "hi", "ifAbsent": True}
    )["etag"]
    got = store.get("from-ts.json")
    assert got is not None
    assert (got.etag, got.body) == (ts_etag, b"hi")
    # Each side's compare-and-swap accepts the other's ETag, and refuses a stale one.
    py_next = store.put("from-ts.json", b"py", precondition=holdfast.IfMatch(ts_etag))
    ts_next = ts(
        {"op": "put", "store": spec(store), "key": "from-ts.json", "body": "ts", "ifMatch": py_next}
    )["etag"]
    stale = ts(
        {"op": "put", "store": spec(store), "key": "from-ts.json", "body": "x", "ifMatch": py_next},
        check=False,
    )
    assert stale["kind"] == "conflict"
    assert store.head("from-ts.json").etag == ts_next  # type: ignore[union-attr]


def test_r3_a_node_holder_of_the_key_lock_excludes_python_writers(
    store: holdfast.LocalStore,
) -> None:
    """The lock is fcntl(F_OFD_SETLK), the lock fs-native-extensions takes on Linux: a BSD
    flock on the same file would not exclude the Node holder, and its compare-and-swap could
    then interleave with a TypeScript delete (R3)."""
    etag = store.put("locked.json", b"v0")
    lock_path = store._lock_path("locked.json")
    holder = spawn({"op": "hold-lock", "lockPath": lock_path, "ms": 1500})
    try:
        short = holdfast.LocalStore(store.root, lock_timeout_ms=300)
        started = time.monotonic()
        with pytest.raises(HoldfastError, check=lambda e: e.code == "ELOCKTIMEOUT"):
            short.put("locked.json", b"v1", precondition=holdfast.IfMatch(etag))
        assert time.monotonic() - started >= 0.3
        with pytest.raises(HoldfastError, check=lambda e: e.code == "ELOCKTIMEOUT"):
            short.delete("locked.json")
        assert store.get("locked.json").body == b"v0"  # type: ignore[union-attr]
        # A patient writer goes through once the holder lets go.
        assert store.put("locked.json", b"v1", precondition=holdfast.IfMatch(etag)) != etag
    finally:
        holder.wait(timeout=10)


def test_concurrent_compare_and_swaps_have_exactly_one_winner(store: holdfast.LocalStore) -> None:
    etag = store.put("race.json", b"v0")
    wins: list[int] = []
    errors: list[BaseException] = []

    def cas(n: int) -> None:
        try:
            store.put("race.json", f"v{n}".encode(), precondition=holdfast.IfMatch(etag))
            wins.append(n)
        except HoldfastError as error:
            errors.append(error)

    threads = [threading.Thread(target=cas, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(wins) == 1
    assert len(errors) == 7
    assert all(isinstance(e, HoldfastError) and e.kind == "conflict" for e in errors)


def test_r9_etags_of_one_key_never_repeat_even_within_one_millisecond(tmp_path: Path) -> None:
    """Writes under the key's lock stamp strictly later than the one before, so an ETag the
    key had earlier never comes back, even if a freed inode number is reused (R9)."""
    frozen = holdfast.LocalStore(tmp_path / "frozen", clock=lambda: 1_800_000_000_000.0)
    stamps = []
    etag = frozen.put("k", b"v")
    for _ in range(20):
        etag = frozen.put("k", b"v", precondition=holdfast.IfMatch(etag))
        stamps.append(int(etag.rsplit("-", 1)[1], 36))
    assert stamps == sorted(set(stamps))
