"""Test helpers: a fake clock, a scripted fault store for protocol tests, dataset fixtures.

The fault store wraps a real store (a :class:`holdfast.LocalStore` in a temp folder whose
clock is the fake storage clock) and loses answers on cue, applied or not, as
``FaultStore`` of ``@holdfast/conditional-store/testing`` does.
"""

from __future__ import annotations

import itertools
import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

import holdfast
from holdfast.errors import ErrorKind
from holdfast.store import Capabilities, GetResult, IfAbsent, ListPage, ObjectMeta, Precondition

T0 = 1_800_000_000_000  # a whole second, in ms


class FakeClock:
    """A settable clock (ms); ``sleep`` advances it instead of waiting."""

    def __init__(self, start: float = T0) -> None:
        self.now = float(start)
        self.pauses: list[float] = []

    def __call__(self) -> float:
        return self.now

    def advance(self, ms: float) -> None:
        self.now += ms

    def sleep(self, ms: float, abort: threading.Event | None = None) -> None:
        if abort is not None and abort.is_set():
            raise holdfast.HoldfastError("aborted", "sleep", "pause aborted")
        self.pauses.append(ms)
        self.now += ms


def seeded_ids(seed: int = 1) -> holdfast.context.Ids:
    """Distinct, valid ULIDs in order (time part fixed, counter in the random part)."""
    counter = itertools.count(seed * 1_000_000)
    return lambda: holdfast.encode_ulid(T0, next(counter).to_bytes(10, "big"))


KEY_CLASSES = {
    "lease": "_holdfast/leases/",
    "record": "_holdfast/retirement/",
    "manifest": "_versions/",
    "fence": "_holdfast/refs/fences/",
    "probe": "_holdfast/clock/",
}


@dataclass
class Fault:
    """One scripted rule, with the semantics of ``FaultStore`` in
    ``@holdfast/conditional-store/testing``: it matches ``op`` on a key containing
    ``key_part`` (or of a key class: lease, record, manifest, fence, probe) with the given
    precondition; it fires from the ``nth`` match on, ``times`` times. ``action``:
    ``apply-then-lose`` (forward, then answer ``kind``), ``lose-before-apply`` (answer
    ``kind``, nothing forwarded), ``refuse``, ``in-flight`` (S3's 409), ``repeat`` (forward
    twice, answer the second)."""

    op: str
    key_part: str = ""
    kind: ErrorKind = "ambiguous"
    applied: bool = False
    times: int = 1
    code: str | None = None
    action: str | None = None
    nth: int = 1
    precondition: str = "any"
    seen: int = 0
    fired: int = 0

    @property
    def effect(self) -> str:
        if self.action is not None:
            return self.action
        return "apply-then-lose" if self.applied else "lose-before-apply"


@dataclass
class FaultStore:
    inner: holdfast.ObjectStore
    capabilities_override: dict[str, object] = field(default_factory=dict)
    faults: list[Fault] = field(default_factory=list)
    calls: list[tuple[str, str]] = field(default_factory=list)
    befores: list[tuple[str, str, Callable[[], object]]] = field(default_factory=list)

    @property
    def backend(self) -> str:
        return f"fault({self.inner.backend})"

    @property
    def location(self) -> str:
        return self.inner.location

    @property
    def capabilities(self) -> Capabilities:
        return replace(self.inner.capabilities, **self.capabilities_override)  # type: ignore[arg-type]

    def lose(self, op: str, key_part: str = "", **options: object) -> None:
        self.faults.append(Fault(op, key_part, **options))  # type: ignore[arg-type]

    def script(self, rule: dict[str, object]) -> None:
        """A rule in the conformance vectors' form (conformance/leases/scenarios.json)."""
        key = str(rule.get("key", ""))
        self.faults.append(
            Fault(
                str(rule["operation"]),
                KEY_CLASSES.get(key, key),
                action=str(rule["fault"]),
                nth=int(rule.get("nth", 1)),  # type: ignore[call-overload]
                times=int(rule.get("times", 1)),  # type: ignore[call-overload]
                precondition=str(rule.get("precondition", "any")),
            )
        )

    def before(self, op: str, key_part: str, run: Callable[[], object]) -> None:
        """Runs ``run`` once, before the next ``op`` on a key containing ``key_part`` is
        forwarded (the ``before`` step of the TypeScript ``FaultStore``): other writers'
        work lands while this request is held."""
        self.befores.append((op, key_part, run))

    def _run_before(self, op: str, key: str) -> None:
        for i, (o, part, run) in enumerate(self.befores):
            if o == op and part in key:
                del self.befores[i]
                run()
                return

    def count(self, op: str | None = None) -> int:
        return sum(1 for o, _ in self.calls if op is None or o == op)

    def _fault(self, op: str, key: str, precondition: Precondition | None = None) -> Fault | None:
        actual = (
            "none"
            if precondition is None
            else "create"
            if isinstance(precondition, IfAbsent)
            else "if-match"
        )
        chosen: Fault | None = None
        for fault in self.faults:
            if fault.op != op or fault.key_part not in key:
                continue
            if fault.precondition not in ("any", actual):
                continue
            fault.seen += 1
            if chosen is not None or fault.seen < fault.nth or fault.fired >= fault.times:
                continue
            fault.fired += 1
            chosen = fault
        return chosen

    def _fail(self, fault: Fault, op: str, key: str) -> holdfast.HoldfastError:
        if fault.effect == "refuse":
            return holdfast.HoldfastError("refused", op, f"scripted refusal on {op} {key}", key=key)
        if fault.effect == "in-flight":
            return holdfast.HoldfastError(
                "in-flight",
                op,
                f"scripted 409 on {op} {key}",
                key=key,
                status=409,
                code="ConditionalRequestConflict",
            )
        return holdfast.HoldfastError(
            fault.kind, op, f"scripted {fault.kind} on {op} {key}", key=key, code=fault.code
        )

    def get(self, key: str, *, abort: threading.Event | None = None) -> GetResult | None:
        self.calls.append(("get", key))
        self._run_before("get", key)
        fault = self._fault("get", key)
        if fault is not None:
            raise self._fail(fault, "get", key)
        return self.inner.get(key, abort=abort)

    def head(self, key: str, *, abort: threading.Event | None = None) -> ObjectMeta | None:
        self.calls.append(("head", key))
        self._run_before("head", key)
        fault = self._fault("head", key)
        if fault is not None:
            raise self._fail(fault, "head", key)
        return self.inner.head(key, abort=abort)

    def put(
        self,
        key: str,
        body: bytes,
        *,
        precondition: Precondition | None = None,
        abort: threading.Event | None = None,
    ) -> str:
        self.calls.append(("put", key))
        self._run_before("put", key)
        fault = self._fault("put", key, precondition)
        if fault is not None:
            if fault.effect == "repeat":
                try:
                    self.inner.put(key, body, precondition=precondition, abort=abort)
                except holdfast.HoldfastError:
                    pass  # a retrying SDK: the first copy's answer is dropped
                return self.inner.put(key, body, precondition=precondition, abort=abort)
            if fault.effect == "apply-then-lose":
                try:
                    self.inner.put(key, body, precondition=precondition, abort=abort)
                except holdfast.HoldfastError:
                    pass
            raise self._fail(fault, "put", key)
        return self.inner.put(key, body, precondition=precondition, abort=abort)

    def delete(
        self, key: str, *, if_match: str | None = None, abort: threading.Event | None = None
    ) -> None:
        self.calls.append(("delete", key))
        fault = self._fault("delete", key, None if if_match is None else holdfast.IfMatch(if_match))
        if fault is not None:
            if fault.effect == "apply-then-lose":
                try:
                    self.inner.delete(key, if_match=if_match, abort=abort)
                except holdfast.HoldfastError:
                    pass
            raise self._fail(fault, "delete", key)
        if not self.capabilities.atomic_conditional_delete:
            if_match = None  # as RGW does: If-Match on DELETE is ignored
        self.inner.delete(key, if_match=if_match, abort=abort)

    def list(
        self,
        prefix: str,
        *,
        start_after: str | None = None,
        page_token: str | None = None,
        page_size: int | None = None,
        abort: threading.Event | None = None,
    ) -> ListPage:
        self.calls.append(("list", prefix))
        self._run_before("list", prefix)
        fault = self._fault("list", prefix)
        if fault is not None:
            raise self._fail(fault, "list", prefix)
        return self.inner.list(
            prefix, start_after=start_after, page_token=page_token, page_size=page_size, abort=abort
        )


@dataclass
class World:
    """One dataset on a local store: storage time and the reader's clock apart (L2)."""

    root: Path
    storage_clock: FakeClock
    reader_clock: FakeClock
    local: holdfast.LocalStore
    store: FaultStore
    ctx: holdfast.Context

    def commit(self, version: int, branch: str = "main") -> None:
        """Writes the manifest of ``version`` (the lease code only HEADs it)."""
        body = {
            "schema": 1,
            "branch": branch,
            "version": version,
            "parent": None,
            "files": [],
            "txnId": "x",
        }
        self.local.put(holdfast.manifest_key(branch, version), json.dumps(body).encode())

    def retire(
        self,
        versions: list[int],
        state: str,
        *,
        branch: str = "main",
        bound_ms: int = 60_000,
        cancelled: tuple[int, ...] = (),
        op_id: str = "01ARZ3NDEKTSV4RRFFQ69G5FAX",
        key_range: tuple[int, int] | None = None,
    ) -> str:
        """Writes a retirement record as the TypeScript retirement package writes it."""
        low, high = key_range or (min(versions), max(versions))
        key = holdfast.retirement_key(branch, low, high, op_id)
        record = {
            "schema": 1,
            "opId": op_id,
            "writerId": "01ARZ3NDEKTSV4RRFFQ69G5FAY",
            "owner": "01ARZ3NDEKTSV4RRFFQ69G5FAZ",
            "branch": branch,
            "state": state,
            "ownershipBoundMs": bound_ms,
            "versions": [
                {"version": v, "manifestEtag": "etag", "cancelled": v in cancelled}
                for v in versions
            ],
        }
        self.local.put(key, json.dumps(record).encode())
        return key

    def leases(self) -> list[str]:
        return [
            meta.key for meta in holdfast.store.list_all(self.local, holdfast.layout.LEASES_PREFIX)
        ]


def make_world(
    root: Path, *, capabilities: dict[str, object] | None = None, seed: int = 1
) -> World:
    storage_clock = FakeClock()
    reader_clock = FakeClock()
    local = holdfast.LocalStore(root, clock=storage_clock, fsync=False)
    # Protocol tests run as a single-attempt client: answers can be lost (a local put
    # completes before it answers, so the local store itself never loses one).
    store = FaultStore(local, {"request_mode": "single-attempt", **(capabilities or {})})
    ctx = holdfast.Context(
        store=store,
        clock=reader_clock,
        ids=seeded_ids(seed),
        random=holdfast.seeded_random_bytes(seed),
        sleep=reader_clock.sleep,
    )
    return World(root, storage_clock, reader_clock, local, store, ctx)


def kept_entries(stats: object) -> list[dict[str, object]]:
    """The CLI's ``retained`` entries as ``{branch, version, reason}``, after checking each
    entry's ``reasons`` lists every reason with the deciding ``reason`` first."""
    assert isinstance(stats, dict)
    entries = stats["retained"]
    assert isinstance(entries, list)
    out: list[dict[str, object]] = []
    for entry in entries:
        assert isinstance(entry, dict)
        reasons = entry["reasons"]
        assert isinstance(reasons, list)
        assert reasons[0] == entry["reason"]
        out.append({k: v for k, v in entry.items() if k != "reasons"})
    return out
