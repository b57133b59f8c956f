"""The shared lease scenarios (conformance/leases/scenarios.json), which the TypeScript suite
runs too: the same operations and store answers must reach the same outcomes, requests,
pauses and lease objects in both implementations (docs/protocol.md §4)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import holdfast
from helpers import World, make_world
from holdfast.errors import HoldfastError

SCENARIOS = Path(__file__).resolve().parents[2] / "conformance" / "leases" / "scenarios.json"
DOC = json.loads(SCENARIOS.read_text())
OTHER_SECRET = "A" * 43  # a well-formed secret no lease here was acquired with


def test_the_file_has_scenarios_of_every_operation() -> None:
    done = {step["do"] for s in DOC["scenarios"] for step in s["steps"]}
    assert {"acquire", "renew", "release"} <= done


@pytest.mark.parametrize("scenario", DOC["scenarios"], ids=[s["id"] for s in DOC["scenarios"]])
def test_scenario(scenario: dict[str, Any], tmp_path: Path) -> None:
    setup = scenario["setup"]
    capabilities: dict[str, object] = {"request_mode": setup.get("requestMode", "single-attempt")}
    if "capabilities" in setup:
        capabilities["atomic_conditional_delete"] = setup["capabilities"]["atomicConditionalDelete"]
    w = make_world(tmp_path / "ds", capabilities=capabilities)
    for branch, versions in setup.get("versions", {"main": [1, 2], "dev": [1]}).items():
        for version in versions:
            w.commit(version, branch)
    Runner(w).run(scenario["steps"])


class Runner:
    def __init__(self, w: World) -> None:
        self.w = w
        self.handles: dict[str, holdfast.Lease] = {}
        self.snapshots: dict[str, bytes] = {}
        self.ops = 0

    def run(self, steps: list[dict[str, Any]]) -> None:
        for index, step in enumerate(steps):
            self.step(index, step)

    def step(self, index: int, step: dict[str, Any]) -> None:
        w = self.w
        do = step["do"]
        if do in ("acquire", "renew", "release"):
            w.store.faults.clear()
            for rule in step.get("faults", []):
                w.store.script(rule)
            w.store.calls.clear()
            pauses_before = len(w.reader_clock.pauses)
            outcome: object
            try:
                outcome = self.operation(do, step)
            except HoldfastError as error:
                outcome = error
            w.store.faults.clear()
            self.check(index, step, outcome, w.reader_clock.pauses[pauses_before:])
        elif do == "retire":
            self.ops += 1
            versions = step["versions"]
            low, high = step.get("range", [min(versions), max(versions)])
            key = holdfast.retirement_key(
                step.get("branch", "main"), low, high, f"OP{self.ops:04d}"
            )
            if "body" in step:
                body = step["body"].encode()
            else:
                body = holdfast.storage_time.encode_json(
                    {
                        "schema": 1,
                        "opId": f"OP{self.ops:04d}",
                        "writerId": f"W{self.ops:04d}",
                        "owner": f"O{self.ops:04d}",
                        "branch": step.get("branch", "main"),
                        "state": step["state"],
                        "ownershipBoundMs": step.get("boundMs", 60_000),
                        "versions": [
                            {
                                "version": v,
                                "manifestEtag": "etag",
                                "cancelled": v in step.get("cancelled", []),
                            }
                            for v in versions
                        ],
                    }
                )
            w.local.put(key, body)
        elif do == "fence":
            w.local.put(holdfast.branch_fence_key(step["branch"]), b'{"schema":1}\n')
        elif do == "delete-manifest":
            w.local.delete(holdfast.manifest_key(step.get("branch", "main"), step["version"]))
        elif do == "delete-lease":
            w.local.delete(self.handles[step["from"]].key)
        elif do == "forge":
            lease = self.handles[step["from"]]
            w.local.put(
                lease.key,
                holdfast.encode_lease_body(
                    OTHER_SECRET,
                    lease_id=lease.lease_id,
                    branch=lease.branch,
                    version=lease.version,
                    ttl_ms=lease.ttl_ms,
                    renewal=step["renewal"],
                    writer_id=lease.writer_id,
                ),
            )
        elif do == "snapshot":
            got = w.local.get(self.handles[step["from"]].key)
            assert got is not None
            self.snapshots[step["from"]] = got.body
        elif do == "restore":
            w.local.put(self.handles[step["from"]].key, self.snapshots[step["from"]])
        elif do == "advance":
            w.reader_clock.advance(step.get("readerMs", 0))
            w.storage_clock.advance(step.get("storageMs", 0))
        else:
            raise AssertionError(f"unknown step {do}")

    def operation(self, do: str, step: dict[str, Any]) -> holdfast.Lease | None:
        if do == "acquire":
            lease = holdfast.acquire(
                self.w.ctx, branch=step["branch"], version=step["version"], ttl_ms=step["ttlMs"]
            )
            self.handles[step.get("as", "a")] = lease
            return lease
        if do == "renew":
            renewed = holdfast.renew(self.w.ctx, self.handles[step["from"]])
            self.handles[step.get("as", step["from"])] = renewed
            return renewed
        holdfast.release(self.w.ctx, self.handles[step["from"]])
        return None

    def check(self, index: int, step: dict[str, Any], outcome: object, pauses: list[float]) -> None:
        expect = step.get("expect")
        if expect is None:
            assert not isinstance(outcome, HoldfastError), f"step {index}: {outcome!r}"
            return
        where = f"step {index} ({step['do']})"
        if expect.get("ok"):
            assert not isinstance(outcome, HoldfastError), f"{where}: {outcome!r}"
            if "renewal" in expect:
                assert isinstance(outcome, holdfast.Lease)
                assert outcome.renewal == expect["renewal"], where
        else:
            assert isinstance(outcome, HoldfastError), (
                f"{where}: expected {expect}, got {outcome!r}"
            )
            assert outcome.kind == expect["kind"], f"{where}: {outcome!r}"
            if "code" in expect:
                assert outcome.code == expect["code"], f"{where}: {outcome!r}"
        if "requests" in expect:
            assert [op for op, _ in self.w.store.calls] == expect["requests"], where
        if "pauses" in expect:
            assert pauses == expect["pauses"], where
        if "leases" in expect:
            assert len(self.w.leases()) == expect["leases"], where
