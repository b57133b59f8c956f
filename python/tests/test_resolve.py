"""The resolver (C1, C5, C6, C7, C10): classification, re-issue and read-back, per client mode."""

from __future__ import annotations

from pathlib import Path

import pytest

import holdfast
from helpers import FakeClock, FaultStore
from holdfast.errors import HoldfastError
from holdfast.resolve import classify_failure


def make(
    tmp_path: Path, mode: str = "single-attempt"
) -> tuple[FaultStore, holdfast.ResolveOptions]:
    clock = FakeClock()
    store = FaultStore(holdfast.LocalStore(tmp_path / "s", fsync=False), {"request_mode": mode})
    return store, holdfast.ResolveOptions(sleep=clock.sleep)


def err(kind: str) -> HoldfastError:
    return HoldfastError(kind, "put", "x")  # type: ignore[arg-type]


def test_c7_classification_depends_on_the_client() -> None:
    assert classify_failure(err("auth"), "repeating") == "ambiguous"
    assert classify_failure(err("auth"), "single-attempt") == "refused"
    assert classify_failure(err("ambiguous"), "completes-before-answer") == "refused"
    assert classify_failure(err("ambiguous"), "single-attempt") == "ambiguous"
    assert classify_failure(err("not-found"), "single-attempt") == "refused"
    assert classify_failure(err("in-flight"), "repeating") == "in-flight"


def test_c1_applied_create_with_a_lost_answer_is_applied(tmp_path: Path) -> None:
    store, options = make(tmp_path)
    store.lose("put", applied=True)
    outcome = holdfast.put_if_absent(store, "k", b"mine", options)
    assert isinstance(outcome, holdfast.Applied)
    assert store.inner.get("k").etag == outcome.etag  # type: ignore[union-attr]


def test_a_first_conflict_without_an_earlier_lost_answer_is_a_plain_conflict(
    tmp_path: Path,
) -> None:
    store, options = make(tmp_path)
    store.inner.put("k", b"theirs")
    outcome = holdfast.put_if_absent(store, "k", b"mine", options)
    assert isinstance(outcome, holdfast.Conflict)
    assert outcome.current is not None
    assert outcome.current.body == b"theirs"
    assert store.count("get") == 1  # every conflict is read back before it is believed


def test_c6_a_create_repeated_below_a_single_attempt_client_is_this_writers(
    tmp_path: Path,
) -> None:
    """An intermediary repeated the create on the way: the first copy landed, the client
    sees the second copy's conflict. Equal bytes are this writer's (docs/guarantees.md)."""
    store, options = make(tmp_path)
    store.inner.put("k", b"mine")
    assert isinstance(holdfast.put_if_absent(store, "k", b"mine", options), holdfast.Applied)
    etag = store.inner.put("j", b"old")
    store.inner.put("j", b"new")
    assert isinstance(holdfast.put_if_match(store, "j", b"new", etag, options), holdfast.Applied)


def test_c6_a_conditional_delete_repeated_below_a_single_attempt_client_applied(
    tmp_path: Path,
) -> None:
    store, options = make(tmp_path)
    etag = store.inner.put("k", b"v")
    store.inner.delete("k")  # the first copy applied; the client sees the second's 412
    store.lose("delete", kind="conflict")
    assert holdfast.delete_if_match(store, "k", etag, options) == "applied"


def test_c6_a_repeating_client_reads_back_after_a_first_conflict(tmp_path: Path) -> None:
    store, options = make(tmp_path, "repeating")
    store.inner.put("k", b"mine")  # an SDK retry of ours landed first
    assert isinstance(holdfast.put_if_absent(store, "k", b"mine", options), holdfast.Applied)
    store.inner.put("j", b"theirs")
    assert isinstance(holdfast.put_if_absent(store, "j", b"mine", options), holdfast.Conflict)


def test_c5_absent_after_every_reissue_is_unresolved(tmp_path: Path) -> None:
    store, options = make(tmp_path)
    store.lose("put", times=5)
    with pytest.raises(HoldfastError, check=lambda e: e.kind == "unresolved"):
        holdfast.put_if_absent(store, "k", b"mine", options)
    assert store.count("put") == 5


def test_c10_pauses_are_200_400_800_1600(tmp_path: Path) -> None:
    clock = FakeClock()
    store = FaultStore(
        holdfast.LocalStore(tmp_path / "s", fsync=False), {"request_mode": "single-attempt"}
    )
    store.lose("put", times=5)
    with pytest.raises(HoldfastError):
        holdfast.put_if_absent(store, "k", b"x", holdfast.ResolveOptions(sleep=clock.sleep))
    assert clock.pauses == [200.0, 400.0, 800.0, 1600.0]


def test_c10_an_abort_stops_reissue(tmp_path: Path) -> None:
    import threading

    store, options = make(tmp_path)
    fence = threading.Event()
    fence.set()
    with pytest.raises(HoldfastError, check=lambda e: e.kind == "aborted"):
        holdfast.put_if_absent(
            store, "k", b"x", holdfast.ResolveOptions(sleep=options.sleep, abort=fence)
        )
    assert store.calls == []


def test_a_first_refusal_is_final_and_not_reissued(tmp_path: Path) -> None:
    store, options = make(tmp_path)
    store.lose("put", kind="refused")
    with pytest.raises(HoldfastError, check=lambda e: e.kind == "refused"):
        holdfast.put_if_absent(store, "k", b"x", options)
    assert store.count("put") == 1


def test_s3_409_on_a_create_over_an_absent_key_stays_unresolved(tmp_path: Path) -> None:
    store, options = make(tmp_path)
    store.lose("put", kind="in-flight")
    with pytest.raises(HoldfastError, check=lambda e: e.kind == "unresolved"):
        holdfast.put_if_absent(store, "k", b"x", options)


def test_if_match_conflict_after_a_lost_answer_reads_back(tmp_path: Path) -> None:
    store, options = make(tmp_path)
    etag = store.inner.put("k", b"v0")
    store.lose("put", applied=True)
    outcome = holdfast.put_if_match(store, "k", b"v1", etag, options)
    assert isinstance(outcome, holdfast.Applied)
    other = store.inner.put("k", b"theirs")
    store.lose("put")
    outcome2 = holdfast.put_if_match(store, "k", b"v2", outcome.etag, options)
    assert isinstance(outcome2, holdfast.Conflict)
    assert outcome2.current is not None
    assert outcome2.current.etag == other


def test_conditional_delete_lost_answer_resolves_by_head(tmp_path: Path) -> None:
    store, options = make(tmp_path)
    etag = store.inner.put("k", b"v")
    store.lose("delete", applied=True)
    assert holdfast.delete_if_match(store, "k", etag, options) == "applied"
    etag = store.inner.put("k", b"v")
    store.lose("delete", times=5)
    with pytest.raises(HoldfastError, check=lambda e: e.kind == "unresolved"):
        holdfast.delete_if_match(store, "k", etag, options)


def test_conditional_delete_is_refused_where_the_store_ignores_it(tmp_path: Path) -> None:
    store, options = make(tmp_path)
    store.capabilities_override["atomic_conditional_delete"] = False
    with pytest.raises(HoldfastError, check=lambda e: e.kind == "unsupported"):
        holdfast.delete_if_match(store, "k", "e", options)


def test_conditional_delete_of_a_replaced_object_is_a_conflict(tmp_path: Path) -> None:
    """The delete's answer is lost and the object is then rewritten (another ETag): the
    read-back says the delete did not apply to the object we named."""
    store, options = make(tmp_path)
    etag = store.inner.put("k", b"v")

    class Replacing(FaultStore):
        def delete(self, key: str, *, if_match: str | None = None, abort: object = None) -> None:
            self.inner.put(key, b"rewritten")
            raise HoldfastError("ambiguous", "delete", "answer lost", key=key)

    replacing = Replacing(store.inner, dict(store.capabilities_override))
    assert holdfast.delete_if_match(replacing, "k", etag, options) == "conflict"
    assert store.inner.get("k").body == b"rewritten"  # type: ignore[union-attr]


def test_conditional_delete_of_an_absent_object_is_settled_by_reading_not_refused(
    tmp_path: Path,
) -> None:
    """S3 answers a conditional DELETE of an absent key 404: its precondition failed, as a
    412 says, and like every conflict it is read back: the object is gone, as asked."""
    store, options = make(tmp_path)
    etag = store.inner.put("k", b"v")
    store.inner.delete("k")
    store.lose("delete", kind="not-found")  # the 404, scripted
    assert holdfast.delete_if_match(store, "k", etag, options) == "applied"
