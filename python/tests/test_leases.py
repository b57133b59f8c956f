"""Lease protocol tests (docs/protocol.md §4) on a real local store with scripted faults.

Scenario ids as in the TypeScript suite (L1, L4, L5, C1, C5, C6, C10); every guard of
``holdfast.lease`` has a test here that fails when the guard is removed.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

import holdfast
from helpers import T0, World, make_world
from holdfast.errors import HoldfastError
from holdfast.storage_time import is_active_at


@pytest.fixture
def w(tmp_path: Path) -> World:
    world = make_world(tmp_path / "ds")
    world.commit(1)
    world.commit(2)
    return world


def acquire(
    w: World, version: int = 2, branch: str = "main", ttl_ms: int = 30_000
) -> holdfast.Lease:
    return holdfast.acquire(w.ctx, version=version, branch=branch, ttl_ms=ttl_ms)


def raises(kind: str, code: str | None = None) -> pytest.RaisesExc[HoldfastError]:
    return pytest.raises(
        HoldfastError, check=lambda e: e.kind == kind and (code is None or e.code == code)
    )


class TestAcquire:
    def test_writes_a_schema_2_lease_in_3_requests_on_main(self, w: World) -> None:
        lease = acquire(w)
        assert lease.key == holdfast.lease_key(
            "main", 2, lease.lease_id, holdfast.lease_tag(lease.secret)
        )
        body = json.loads(w.local.get(lease.key).body)  # type: ignore[union-attr]
        assert list(body) == [
            "schema",
            "leaseId",
            "branch",
            "version",
            "ttlMs",
            "renewal",
            "writerId",
            "proof",
        ]
        assert body["proof"] == holdfast.lease_proof(
            lease.secret, lease.lease_id, 0, lease.writer_id
        )
        assert [op for op, _ in w.store.calls] == ["put", "list", "head"]
        assert w.leases() == [lease.key]
        assert lease.etag == w.local.head(lease.key).etag  # type: ignore[union-attr]

    def test_off_main_it_also_reads_the_branch_fence(self, w: World) -> None:
        w.commit(1, branch="dev")
        acquire(w, version=1, branch="dev")
        assert w.store.calls[2] == ("head", "_holdfast/refs/fences/dev.json")
        assert w.store.count() == 4

    @pytest.mark.parametrize(
        ("state", "code"),
        [("draining", "RETIRING"), ("sealed", "SEALED"), ("committed", "COMMITTED")],
    )
    def test_refused_while_retiring_and_its_lease_removed(
        self, w: World, state: str, code: str
    ) -> None:
        w.retire([1, 2], state)
        with raises("refused", code):
            acquire(w)
        assert w.leases() == []

    def test_l5_an_abandoned_drain_past_its_bound_does_not_block(self, w: World) -> None:
        w.retire([2], "draining", bound_ms=10_000)
        w.storage_clock.advance(11_000 + 1_000)  # bound + one precision interval later
        lease = acquire(w)
        assert w.leases() == [lease.key]
        assert w.store.count("put") == 2  # the lease and the storage-time probe

    def test_a_live_drain_judged_on_storage_time_not_the_reader_clock(self, w: World) -> None:
        w.retire([2], "draining", bound_ms=10_000)
        w.reader_clock.advance(3_600_000)  # the reader's clock is an hour ahead (L2)
        with raises("refused", "RETIRING"):
            acquire(w)

    def test_cancelled_records_versions_and_other_ranges_admit(self, w: World) -> None:
        w.commit(3)
        w.retire([2], "cancelled", op_id="01ARZ3NDEKTSV4RRFFQ69G5FA1")
        w.retire([1, 2], "sealed", cancelled=(2,), op_id="01ARZ3NDEKTSV4RRFFQ69G5FA2")
        w.retire([3], "committed", op_id="01ARZ3NDEKTSV4RRFFQ69G5FA3")
        w.retire([1], "sealed", key_range=(1, 1), op_id="01ARZ3NDEKTSV4RRFFQ69G5FA4")
        w.retire([4], "sealed", key_range=(1, 4), op_id="01ARZ3NDEKTSV4RRFFQ69G5FA5")
        lease = acquire(w)
        assert lease.version == 2
        with raises("refused", "COMMITTED"):
            acquire(w, version=3)

    def test_a_record_of_another_branch_folder_name_does_not_count(self, w: World) -> None:
        w.commit(2, branch="dev")
        w.retire([2], "sealed", branch="dev")
        assert acquire(w).version == 2

    def test_fails_closed_on_an_unreadable_record_and_removes_its_lease(self, w: World) -> None:
        key = holdfast.retirement_key("main", 1, 2, "01ARZ3NDEKTSV4RRFFQ69G5FAX")
        w.local.put(key, b"{not json")
        with raises("invalid-input", "MALFORMED_OBJECT"):
            acquire(w)
        w.local.put(key, json.dumps({"schema": 99}).encode())
        with raises("unsupported"):
            acquire(w)
        assert w.leases() == []

    def test_refused_when_the_admission_read_fails_and_removes_its_lease(self, w: World) -> None:
        w.store.lose("list", "_holdfast/retirement/", kind="refused")
        with raises("refused"):
            acquire(w)
        assert w.leases() == []

    def test_branch_deleting_refuses_and_removes_its_lease(self, w: World) -> None:
        w.commit(1, branch="dev")
        w.local.put(holdfast.branch_fence_key("dev"), b"{}")
        with raises("refused", "BRANCH_DELETING"):
            acquire(w, version=1, branch="dev")
        assert w.leases() == []

    def test_a_version_retired_before_the_lease_write_is_not_found(self, w: World) -> None:
        with raises("not-found", "VERSION_NOT_FOUND"):
            acquire(w, version=3)
        assert w.leases() == []

    def test_c1_a_create_whose_answer_was_lost_resolves_as_applied(self, w: World) -> None:
        w.store.lose("put", "_holdfast/leases/", applied=True)
        lease = acquire(w)
        assert w.leases() == [lease.key]
        assert w.reader_clock.pauses == [200.0]  # one re-issue, then the read-back

    def test_an_unresolved_create_removes_what_it_may_have_left(self, w: World) -> None:
        w.store.lose("put", "_holdfast/leases/", applied=True)
        w.store.lose("put", "_holdfast/leases/", times=4)
        w.store.lose("get", "_holdfast/leases/")  # the read-back is lost too
        with raises("unresolved"):
            acquire(w)
        assert w.leases() == []

    def test_a_taken_key_is_a_conflict(self, w: World) -> None:
        first = acquire(w)
        again = holdfast.Context(
            store=w.store,
            clock=w.ctx.clock,
            ids=lambda: first.lease_id,
            random=holdfast.seeded_random_bytes(1),
            sleep=w.ctx.sleep,
        )
        with raises("conflict"):
            holdfast.acquire(again, version=2, ttl_ms=30_000)

    @pytest.mark.parametrize(
        ("ttl", "ttl_ms"),
        [(None, 99), (None, 86_400_001), (0.05, None), (0.1005, None), (True, None), (None, None)],
    )
    def test_invariant_6_invalid_ttls_are_refused_before_any_request(
        self, w: World, ttl: float | None, ttl_ms: int | None
    ) -> None:
        with raises("invalid-input", "INVALID_TTL"):
            holdfast.acquire(w.ctx, version=2, ttl=ttl, ttl_ms=ttl_ms)
        assert w.store.calls == []

    def test_ttl_in_seconds_or_timedelta(self, w: World) -> None:
        from datetime import timedelta

        assert holdfast.acquire(w.ctx, version=2, ttl=0.1).ttl_ms == 100
        assert holdfast.acquire(w.ctx, version=2, ttl=timedelta(minutes=5)).ttl_ms == 300_000

    @pytest.mark.parametrize(
        ("branch", "version"), [("../x", 1), ("main", 0), ("main", True), ("", 1)]
    )
    def test_invariant_6_bad_names_and_versions_are_refused(
        self, w: World, branch: str, version: int
    ) -> None:
        with raises("invalid-input"):
            holdfast.acquire(w.ctx, version=version, branch=branch, ttl_ms=1000)
        assert w.store.calls == []


class TestStalledAcquire:
    """docs/protocol.md §5.4, *A stalled acquire*: admitted only because a
    committed (or cancelled) record shows the version cancelled, acquire rewrites its lease
    (1 PUT) before returning it; nowhere else."""

    def finalize_leases_of(self, w: World, version: int, view_ms: int) -> None:
        """A finalizer's lease deletion (``deleteLeasesOf`` with ``writtenBefore`` = its view
        W): every lease of the version written a whole precision interval before W goes."""
        precision = w.local.capabilities.timestamp_precision_ms
        prefix = f"{holdfast.layout.LEASES_PREFIX}main/{version:020d}/"
        for meta in holdfast.store.list_all(w.local, prefix):
            if not is_active_at(meta.last_modified_ms, 0, precision, view_ms):
                w.local.delete(meta.key)

    def test_l1_an_acquire_stalled_across_commit_and_cancel_replaced_keeps_its_lease(
        self, w: World
    ) -> None:
        # A cleaner sealed versions 1 and 2; its censuses saw no lease. The lease PUT lands
        # now; the admission read is held while the record is committed, a recovering
        # cleaner reads it (its view W), and version 2 is cancelled (cancelReplaced).
        w.retire([1, 2], "sealed")
        view: list[int] = []

        def commit_then_cancel() -> None:
            w.storage_clock.advance(2_000)
            key = w.retire([1, 2], "committed")
            view.append(w.local.head(key).last_modified_ms)  # type: ignore[union-attr]
            w.storage_clock.advance(2_000)
            w.retire([1, 2], "committed", cancelled=(2,))

        w.store.before("list", "_holdfast/retirement/", commit_then_cancel)
        put_at = int(w.storage_clock())
        lease = acquire(w, ttl_ms=600_000)
        calls = [op for op, _ in w.store.calls]
        assert view[0] >= put_at + 2_000  # W follows the lease PUT
        self.finalize_leases_of(w, 2, view[0])
        assert w.leases() == [lease.key]  # kept: rewritten after the cancellation
        assert calls == ["put", "list", "get", "head", "put"]  # the rare path: +1 PUT
        assert lease.renewal == 1
        stored = w.local.head(lease.key)
        assert stored is not None
        assert stored.etag == lease.etag
        # The record still names version 2 cancelled: the renewal writes twice.
        assert holdfast.renew(w.ctx, lease).renewal == 3

    def test_a_record_cancelled_after_its_commit_reopens_too(self, w: World) -> None:
        w.retire([1, 2], "cancelled", cancelled=(1, 2))
        lease = acquire(w)
        assert w.store.count("put") == 2
        assert lease.renewal == 1

    @pytest.mark.parametrize("state", ["draining", "sealed"])
    def test_a_version_cancelled_before_any_commit_costs_no_rewrite(
        self, w: World, state: str
    ) -> None:
        w.retire([1, 2], state, cancelled=(2,))
        lease = acquire(w)
        assert [op for op, _ in w.store.calls] == ["put", "list", "get", "head"]
        assert lease.renewal == 0

    def test_a_lease_deleted_before_its_rewrite_fails_the_acquire_lease_lost(
        self, w: World
    ) -> None:
        w.retire([1, 2], "committed", cancelled=(2,))
        deleted: list[str] = []

        def finalizer() -> None:
            for key in w.leases():
                w.local.delete(key)
                deleted.append(key)

        w.store.before("head", "_versions/", finalizer)
        with pytest.raises(HoldfastError) as caught:
            acquire(w)
        assert (caught.value.kind, caught.value.code, caught.value.operation) == (
            "not-found",
            "LEASE_LOST",
            "acquire",
        )
        assert len(deleted) == 1
        assert w.leases() == []

    def test_c5_the_rewrites_lost_answer_is_settled_by_read_back(self, w: World) -> None:
        w.retire([1, 2], "committed", cancelled=(2,))
        w.store.lose("put", "_holdfast/leases/", applied=True, precondition="if-match")
        lease = acquire(w)
        assert lease.renewal == 1
        assert w.local.head(lease.key).etag == lease.etag  # type: ignore[union-attr]

    def test_c5_an_unresolved_rewrite_fails_the_acquire_and_removes_the_lease(
        self, w: World
    ) -> None:
        w.retire([1, 2], "committed", cancelled=(2,))
        w.store.lose("put", "_holdfast/leases/", precondition="if-match", times=5)
        with raises("unresolved"):
            acquire(w)
        assert w.leases() == []


class TestStalledRenewal:
    """docs/protocol.md §5.4, *A stalled renewal*: admitted only because
    a committed (or cancelled) record shows the version cancelled, renew writes its lease once
    more (1 PUT) after that read; nowhere else."""

    def test_l1_a_renewal_stalled_across_commit_and_cancel_replaced_keeps_its_lease(
        self, w: World
    ) -> None:
        lease = acquire(w, ttl_ms=600_000)
        # A cleaner sealed versions 1 and 2; its censuses counted the lease expired. The
        # renewal's PUT lands now; its admission read is held while the record is committed,
        # a recovering cleaner reads it (its view W), and version 2 is cancelled.
        w.retire([1, 2], "sealed")
        view: list[int] = []

        def commit_then_cancel() -> None:
            w.storage_clock.advance(2_000)
            key = w.retire([1, 2], "committed")
            view.append(w.local.head(key).last_modified_ms)  # type: ignore[union-attr]
            w.storage_clock.advance(2_000)
            w.retire([1, 2], "committed", cancelled=(2,))

        w.store.calls.clear()
        w.store.before("list", "_holdfast/retirement/", commit_then_cancel)
        put_at = int(w.storage_clock())
        renewed = holdfast.renew(w.ctx, lease)
        assert [op for op, _ in w.store.calls] == ["put", "list", "get", "put"]
        assert view[0] >= put_at + 2_000  # W follows the first PUT
        TestStalledAcquire().finalize_leases_of(w, 2, view[0])
        assert w.leases() == [lease.key]  # kept: written again after the cancellation
        assert renewed.renewal == lease.renewal + 2
        stored = w.local.head(lease.key)
        assert stored is not None
        assert stored.etag == renewed.etag

    def test_a_lease_deleted_before_the_second_write_fails_the_renewal_lease_lost(
        self, w: World
    ) -> None:
        lease = acquire(w)
        w.retire([1, 2], "committed", cancelled=(2,))
        # A finalizer deletes the lease between the admission LIST and the record's GET.
        w.store.before("get", "_holdfast/retirement/", lambda: w.local.delete(lease.key))
        with pytest.raises(HoldfastError) as caught:
            holdfast.renew(w.ctx, lease)
        assert (caught.value.kind, caught.value.code) == ("not-found", "LEASE_LOST")
        assert w.leases() == []


class TestRenew:
    def test_rewrites_with_fresh_bytes_in_2_requests(self, w: World) -> None:
        lease = acquire(w)
        before = w.local.get(lease.key)
        w.store.calls.clear()
        w.storage_clock.advance(5_000)
        renewed = holdfast.renew(w.ctx, lease)
        assert [op for op, _ in w.store.calls] == ["put", "list"]
        after = w.local.get(lease.key)
        assert renewed.renewal == 1
        assert renewed.etag == after.etag != before.etag  # type: ignore[union-attr]
        assert after.last_modified_ms == before.last_modified_ms + 5_000  # type: ignore[union-attr]
        body = json.loads(after.body)  # type: ignore[union-attr]
        assert body["renewal"] == 1
        assert body["writerId"] == renewed.writer_id != lease.writer_id

    def test_l1_a_lease_admitted_before_the_drain_renews_while_draining(self, w: World) -> None:
        lease = acquire(w)
        w.retire([2], "draining")
        assert holdfast.renew(w.ctx, lease).renewal == 1

    @pytest.mark.parametrize(("state", "code"), [("sealed", "SEALED"), ("committed", "COMMITTED")])
    def test_sealing_is_the_renewal_cutoff(self, w: World, state: str, code: str) -> None:
        lease = acquire(w)
        w.retire([2], state)
        with raises("refused", code):
            holdfast.renew(w.ctx, lease)

    def test_an_expired_lease_is_never_rewritten(self, w: World) -> None:
        lease = acquire(w, ttl_ms=1_000)
        w.reader_clock.advance(1_000)
        w.store.calls.clear()
        with raises("refused", "LEASE_EXPIRED"):
            holdfast.renew(w.ctx, lease)
        assert w.store.calls == []

    def test_a_deleted_lease_is_lost(self, w: World) -> None:
        lease = acquire(w)
        w.local.delete(lease.key)
        with raises("not-found", "LEASE_LOST"):
            holdfast.renew(w.ctx, lease)

    def test_c6_a_renewal_whose_answer_was_lost_reads_back_its_own_bytes(self, w: World) -> None:
        lease = acquire(w)
        w.store.lose("put", lease.key, applied=True)
        renewed = holdfast.renew(w.ctx, lease)
        assert renewed.renewal == 1
        assert renewed.etag == w.local.head(lease.key).etag  # type: ignore[union-attr]

    def test_a_later_own_write_whose_answer_was_lost_is_adopted(self, w: World) -> None:
        lease = acquire(w)
        w.store.lose("put", lease.key, applied=True)
        w.store.lose("put", lease.key, times=4)
        w.store.lose("get", lease.key)
        with raises("unresolved"):
            holdfast.renew(w.ctx, lease)  # renewal 1 landed; nobody knows
        renewed = holdfast.renew(w.ctx, lease)  # the old handle: conflict, then adoption
        assert renewed.renewal == 2
        assert json.loads(w.local.get(lease.key).body)["renewal"] == 2  # type: ignore[union-attr]

    def test_a_body_without_the_secret_is_never_adopted(self, w: World) -> None:
        lease = acquire(w)
        forged = holdfast.encode_lease_body(
            "A" * 43,
            lease_id=lease.lease_id,
            branch="main",
            version=2,
            ttl_ms=30_000,
            renewal=5,
            writer_id=lease.writer_id,
        )
        w.local.put(lease.key, forged)
        with raises("not-found", "LEASE_LOST"):
            holdfast.renew(w.ctx, lease)
        assert w.local.get(lease.key).body == forged  # type: ignore[union-attr]

    def test_an_older_own_body_put_back_is_never_adopted(self, w: World) -> None:
        lease = acquire(w)
        original = w.local.get(lease.key).body  # type: ignore[union-attr]
        renewed = holdfast.renew(w.ctx, lease)
        w.local.put(lease.key, original)  # renewal 0 again, at a new ETag
        with raises("not-found", "LEASE_LOST"):
            holdfast.renew(w.ctx, renewed)

    def test_a_term_that_ran_out_in_flight_checks_the_manifest(self, w: World) -> None:
        lease = acquire(w, ttl_ms=1_000)
        w.reader_clock.advance(900)
        w.store.lose("put", lease.key, applied=False)  # one lost answer: 200 ms pause
        w.local.delete(holdfast.manifest_key("main", 2))  # retired meanwhile
        with raises("not-found", "VERSION_NOT_FOUND"):
            holdfast.renew(w.ctx, lease)
        assert w.leases() == []

    def test_a_term_that_ran_out_in_flight_keeps_a_version_that_exists(self, w: World) -> None:
        lease = acquire(w, ttl_ms=1_000)
        w.reader_clock.advance(900)
        w.store.lose("put", lease.key, applied=False)
        assert holdfast.renew(w.ctx, lease).renewal == 1
        assert w.store.calls[-1] == ("head", holdfast.manifest_key("main", 2))


class TestRelease:
    def test_deletes_only_its_lease_and_is_idempotent(self, w: World) -> None:
        lease = acquire(w)
        other = acquire(w)
        holdfast.release(w.ctx, lease)
        holdfast.release(w.ctx, lease)
        assert w.leases() == [other.key]

    def test_after_a_lost_renewal_it_deletes_the_later_own_write(self, w: World) -> None:
        lease = acquire(w)
        w.store.lose("put", lease.key, applied=True)
        w.store.lose("put", lease.key, times=4)
        w.store.lose("get", lease.key)
        with raises("unresolved"):
            holdfast.renew(w.ctx, lease)
        holdfast.release(w.ctx, lease)
        assert w.leases() == []

    def test_leaves_an_object_that_is_not_this_lease_any_more(self, w: World) -> None:
        lease = acquire(w)
        forged = w.local.get(lease.key).body.replace(b'"renewal":0', b'"renewal":9')  # type: ignore[union-attr]
        w.local.put(lease.key, forged)
        with raises("conflict", "LEASE_LOST"):
            holdfast.release(w.ctx, lease)
        assert w.leases() == [lease.key]

    def test_without_conditional_delete_it_deletes_the_checked_key(self, tmp_path: Path) -> None:
        w = make_world(tmp_path / "rgw-like", capabilities={"atomic_conditional_delete": False})
        w.commit(1)
        lease = acquire(w, version=1)
        w.store.calls.clear()
        holdfast.release(w.ctx, lease)
        assert w.store.calls == [("delete", lease.key)]
        assert w.leases() == []


class TestHandles:
    def mutations(self, lease: holdfast.Lease) -> list[holdfast.Lease]:
        other_tag = holdfast.lease_tag("A" * 43)
        return [
            replace(lease, secret="A" * 43),
            replace(lease, secret=lease.secret[:-1] + ("B" if lease.secret[-1] != "B" else "C")),
            replace(lease, key=holdfast.manifest_key("main", 2)),
            replace(
                lease,
                key=holdfast.lease_key("main", 1, lease.lease_id, holdfast.lease_tag(lease.secret)),
            ),
            replace(lease, key=lease.key.replace(holdfast.lease_tag(lease.secret), other_tag)),
            replace(lease, key=f"_holdfast/leases/main/00000000000000000002/{lease.lease_id}.json"),
            replace(lease, etag=""),
            replace(lease, ttl_ms=50),
            replace(lease, renewal=-1),
            replace(lease, lease_id="not-a-ulid"),
        ]

    def test_invariant_6_renew_and_release_refuse_a_handle_that_names_another_object(
        self, w: World
    ) -> None:
        lease = acquire(w)
        w.store.calls.clear()
        for bad in self.mutations(lease):
            with raises("invalid-input"):
                holdfast.renew(w.ctx, bad)
            with raises("invalid-input"):
                holdfast.release(w.ctx, bad)
        assert w.store.calls == []
        assert w.leases() == [lease.key]

    def test_invariant_6_a_handle_without_an_etag_deletes_nothing_where_delete_is_unconditional(
        self, tmp_path: Path
    ) -> None:
        w = make_world(tmp_path / "rgw-like", capabilities={"atomic_conditional_delete": False})
        w.commit(1)
        lease = acquire(w, version=1)
        w.store.calls.clear()
        with raises("invalid-input", "INVALID_LEASE_HANDLE"):
            holdfast.release(w.ctx, replace(lease, etag=""))
        assert w.store.calls == []
        assert w.leases() == [lease.key]

    def test_handles_round_trip_through_the_typescript_shape(self, w: World) -> None:
        lease = acquire(w)
        shape = lease.to_dict()
        assert set(shape) == {
            "leaseId", "branch", "version", "ttlMs", "secret", "key", "etag",
            "renewal", "writerId", "writtenAtLocalMs", "manifestKey",
        }  # fmt: skip
        assert holdfast.Lease.from_dict(json.loads(json.dumps(shape))) == lease
        with raises("invalid-input", "INVALID_LEASE_HANDLE"):
            holdfast.Lease.from_dict({**shape, "secret": "A" * 43})
        assert "secret" not in repr(lease) or lease.secret not in repr(lease)


class TestListing:
    def test_lists_by_branch_and_version_with_ttls(self, w: World) -> None:
        a = acquire(w, version=1, ttl_ms=1_000)
        b = acquire(w, version=2)
        w.local.put("_holdfast/leases/main/00000000000000000002/junk.txt", b"x")
        assert [e.lease_id for e in holdfast.list(w.ctx)] == sorted([a.lease_id, b.lease_id])
        (entry,) = holdfast.list(w.ctx, branch="main", version=1, read_bodies=True)
        assert entry.ttl_ms == 1_000
        assert entry.expires_at_ms == T0 + 1_000 + 1_000
        with raises("invalid-input"):
            list(holdfast.list(w.ctx, version=1))


class TestGuards:
    """Guards a removal run found without a test of their own (docs/protocol.md §4)."""

    def test_both_ttl_forms_at_once_are_refused_before_any_request(self, w: World) -> None:
        with raises("invalid-input", "INVALID_TTL"):
            holdfast.acquire(w.ctx, version=2, ttl=30, ttl_ms=30_000)
        assert w.store.calls == []

    @pytest.mark.parametrize("branch", ["a/b", "x y", ".hidden", "-x", "\u00fc", "a" * 129])
    def test_invariant_6_a_branch_that_is_no_name_is_refused_before_any_request(
        self, w: World, branch: str
    ) -> None:
        with raises("invalid-input", "INVALID_NAME"):
            holdfast.acquire(w.ctx, version=2, branch=branch, ttl_ms=1000)
        assert w.store.calls == []

    @pytest.mark.parametrize("field", ["lease_id", "branch", "version"])
    def test_a_later_body_of_another_lease_under_the_same_secret_is_never_adopted(
        self, w: World, field: str
    ) -> None:
        """The stored body's proof verifies under the handle's secret and its renewal is
        later, but it names another lease id, branch or version: not this lease's write."""
        lease = acquire(w)
        fields = {
            "lease_id": lease.lease_id,
            "branch": "main",
            "version": 2,
            "ttl_ms": 30_000,
            "renewal": 5,
            "writer_id": lease.writer_id,
        }
        other = {"lease_id": "01ARZ3NDEKTSV4RRFFQ69G5FB0", "branch": "dev", "version": 1}
        fields[field] = other[field]
        body = holdfast.encode_lease_body(lease.secret, **fields)  # type: ignore[arg-type]
        w.local.put(lease.key, body)
        with raises("not-found", "LEASE_LOST"):
            holdfast.renew(w.ctx, lease)
        assert w.local.get(lease.key).body == body  # type: ignore[union-attr]

    @pytest.mark.parametrize("handle", [None, "lease", {"key": "x"}, 7])
    def test_invariant_6_something_that_is_not_a_lease_is_refused_before_any_request(
        self, w: World, handle: object
    ) -> None:
        for call in (holdfast.renew, holdfast.release):
            with raises("invalid-input", "INVALID_LEASE_HANDLE"):
                call(w.ctx, handle)  # type: ignore[arg-type]
        assert w.store.calls == []

    @pytest.mark.parametrize(
        ("change", "value"),
        [
            ("schema", 1),
            ("schema", 3),
            ("leaseId", "not-a-ulid"),
            ("writerId", "01arz3ndektsv4rrffq69g5fav"),
            ("proof", "A" * 64),
            ("proof", "a" * 63),
            ("proof", 5),
        ],
    )
    def test_a_body_that_is_not_schema_2_does_not_parse(
        self, w: World, change: str, value: object
    ) -> None:
        lease = acquire(w)
        body = json.loads(w.local.get(lease.key).body)  # type: ignore[union-attr]
        assert holdfast.parse_lease_body(json.dumps(body).encode()) is not None
        body[change] = value
        assert holdfast.parse_lease_body(json.dumps(body).encode()) is None

    def test_the_most_severe_covering_record_wins(self, w: World) -> None:
        """A sealed record and a draining one (listed after it) both cover version 2: the
        acquire is refused as SEALED, not admitted as merely draining."""
        w.retire([2], "sealed", op_id="01ARZ3NDEKTSV4RRFFQ69G5FA1")
        w.retire([2], "draining", op_id="01ARZ3NDEKTSV4RRFFQ69G5FA2", bound_ms=10**12)
        with raises("refused", "SEALED"):
            acquire(w)
        assert w.leases() == []

    def test_a_random_source_that_gives_no_32_bytes_is_refused(self, w: World) -> None:
        from holdfast.secret import draw_lease_secret

        with pytest.raises(TypeError):
            draw_lease_secret(lambda n: bytes(n - 1))
        assert len(draw_lease_secret(lambda n: bytes(n))) == 43

    @pytest.mark.parametrize("secret", ["A" * 42, "A" * 43 + "=", "A" * 42 + "B", "!" * 43])
    def test_invariant_6_a_handle_whose_secret_is_no_canonical_secret_is_refused(
        self, w: World, secret: str
    ) -> None:
        """The handle check names the handle (INVALID_LEASE_HANDLE, as the TypeScript
        checkLeaseHandle does) before any request, whatever is wrong with the secret."""
        lease = acquire(w)
        w.store.calls.clear()
        bad = replace(lease, secret=secret)
        for call in (holdfast.renew, holdfast.release):
            with raises("invalid-input", "INVALID_LEASE_HANDLE"):
                call(w.ctx, bad)
        assert w.store.calls == []
