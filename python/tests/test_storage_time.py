"""Storage-time arithmetic (docs/protocol.md §3): the boundaries the protocol documents."""

from __future__ import annotations

from pathlib import Path

import pytest

import holdfast
from holdfast import is_active_at, lease_expires_at, precision_interval_ms, trunc_sec
from holdfast.errors import HoldfastError
from holdfast.storage_time import storage_now


def test_ttl_10s_is_active_before_111s_and_expired_from_it() -> None:
    assert is_active_at(100_000, 10_000, 1000, 110_999)
    assert not is_active_at(100_000, 10_000, 1000, 111_000)


def test_l4_a_sub_second_ttl_survives_whole_second_truncation() -> None:
    # acquired at real 100.9 s, stamped 100 s: still active at 101.001 s, expired from 102 s
    assert is_active_at(100_000, 900, 1000, 101_001)
    assert is_active_at(100_000, 900, 1000, 101_999)
    assert not is_active_at(100_000, 900, 1000, 102_000)


def test_both_sides_are_truncated_to_whole_seconds() -> None:
    # a LIST in ms and a HEAD in whole seconds of one object judge alike
    assert is_active_at(100_999, 10_000, 1, 110_999) == is_active_at(100_000, 10_000, 1000, 110_000)
    assert trunc_sec(1_999) == 1_000


@pytest.mark.parametrize(
    ("precision", "interval"), [(1, 1000), (1000, 1000), (2000, 2000), (1500, 3000), (0, 1000)]
)
def test_precision_interval(precision: int, interval: int) -> None:
    assert precision_interval_ms(precision) == interval


def test_expiry_adds_ttl_and_interval_to_the_truncated_stamp() -> None:
    assert lease_expires_at(100_500, 30_000, 1) == 131_000


def test_a_probe_the_store_does_not_show_is_refused(tmp_path: Path) -> None:
    """A store that does not show its own write (no read-after-write) gives no storage
    time: the probe refuses instead of answering a time it never read."""
    from helpers import FaultStore

    class Forgetful(FaultStore):
        def head(self, key: str, *, abort: object = None) -> None:
            return None

    store = Forgetful(holdfast.LocalStore(tmp_path / "s", fsync=False))
    with pytest.raises(HoldfastError, check=lambda e: e.kind == "unsupported"):
        storage_now(holdfast.Context(store=store))
