import { readFileSync } from "node:fs";
import {
  encodeJson,
  isHoldfastError,
  MemoryStore,
  type RequestMode,
  seededIds,
  seededRandomBytes,
} from "@holdfast/conditional-store";
import { type Fault, FaultStore } from "@holdfast/conditional-store/testing";
import { holdfastLayout, manifestKey } from "@holdfast/dataset";
import { markHoldfastDataset } from "@holdfast/dataset/internal";
import {
  acquireLease,
  branchFenceKey,
  encodeLeaseBody,
  type Lease,
  releaseLease,
  renewLease,
} from "@holdfast/leases";
import { createContext } from "@holdfast/protocol";
import { retirementKey } from "@holdfast/retirement";
import { describe, expect, it } from "vitest";

// The shared lease scenarios (repo root): the Python package runs the same file
// (python/tests/test_conformance.py), so both implementations reach the same outcomes,
// requests, pauses and lease objects for the same store answers (docs/protocol.md §4).

interface Step {
  readonly do: string;
  readonly [field: string]: unknown;
}
interface Scenario {
  readonly id: string;
  readonly about: string;
  readonly setup: {
    readonly versions?: Record<string, number[]>;
    readonly requestMode?: RequestMode;
    readonly capabilities?: { readonly atomicConditionalDelete: boolean };
  };
  readonly steps: readonly Step[];
}
interface Expect {
  readonly ok?: boolean;
  readonly renewal?: number;
  readonly kind?: string;
  readonly code?: string;
  readonly requests?: readonly string[];
  readonly pauses?: readonly number[];
  readonly leases?: number;
}
interface Rule {
  readonly operation: "get" | "head" | "put" | "delete" | "list";
  readonly key?: string;
  readonly nth?: number;
  readonly times?: number;
  readonly fault: Fault["type"];
}

const doc = JSON.parse(
  readFileSync(new URL("../../../conformance/leases/scenarios.json", import.meta.url), "utf8"),
) as { scenarios: Scenario[] };

const T0 = Date.UTC(2026, 0, 1, 0, 0, 100);
const OTHER_SECRET = "A".repeat(43); // a well-formed secret no lease here was acquired with
const KEY_CLASSES: Record<string, string> = {
  lease: "_holdfast/leases/",
  record: "_holdfast/retirement/",
  manifest: "_versions/",
  fence: "_holdfast/refs/fences/",
  probe: "_holdfast/clock/",
};

describe("lease scenarios (conformance/leases/scenarios.json)", () => {
  it("has scenarios of every operation", () => {
    const done = new Set(doc.scenarios.flatMap((s) => s.steps.map((step) => step.do)));
    for (const op of ["acquire", "renew", "release"]) expect(done).toContain(op);
  });

  it.each(doc.scenarios)("$id: $about", async (scenario) => {
    let storageNow = T0;
    let readerNow = T0;
    const pauses: number[] = [];
    const memory = new MemoryStore({ clock: { now: () => storageNow } });
    const fault = new FaultStore(memory, {
      requestMode: scenario.setup.requestMode ?? "single-attempt",
      capabilities: scenario.setup.capabilities ?? {},
    });
    // The scenarios are holdfast datasets without an identity object: the store counts as
    // having shown it, so the shared request sequences stay free of the format guard's one
    // HEAD (docs/protocol.md §1.1), which is not shared.
    markHoldfastDataset(fault);
    const ctx = createContext(fault, {
      clock: { now: () => readerNow },
      ids: seededIds(1),
      random: seededRandomBytes(1),
      // The resolver's pauses pass on the reader clock at once.
      sleep: async (ms, signal) => {
        if (signal?.aborted) throw signal.reason;
        pauses.push(ms);
        readerNow += ms;
      },
    });
    const versions = scenario.setup.versions ?? { main: [1, 2], dev: [1] };
    for (const [branch, list] of Object.entries(versions)) {
      for (const v of list) await memory.put(manifestKey(branch, v), encodeJson({ schema: 1 }));
    }
    const handles = new Map<string, Lease>();
    const snapshots = new Map<string, Uint8Array>();
    let ops = 0;
    const handle = (name: unknown) => {
      const found = handles.get(String(name));
      if (!found) throw new Error(`no handle ${String(name)}`);
      return found;
    };
    const leaseCount = async () => (await memory.list("_holdfast/leases/")).objects.length;

    for (const [index, step] of scenario.steps.entries()) {
      const where = `${scenario.id} step ${index} (${step.do})`;
      switch (step.do) {
        case "acquire":
        case "renew":
        case "release": {
          fault.clearScript();
          for (const rule of (step.faults ?? []) as Rule[]) {
            const prefix = rule.key === undefined ? undefined : (KEY_CLASSES[rule.key] ?? rule.key);
            fault.script({
              operation: rule.operation,
              key: prefix === undefined ? undefined : (k: string) => k.startsWith(prefix),
              nth: rule.nth,
              times: rule.times,
              fault: { type: rule.fault } as Fault,
            });
          }
          const sent = fault.requests().length;
          const paused = pauses.length;
          let outcome: unknown;
          try {
            if (step.do === "acquire") {
              const lease = await acquireLease(ctx, {
                branch: String(step.branch),
                version: Number(step.version),
                ttlMs: Number(step.ttlMs),
                format: holdfastLayout,
              });
              handles.set(String(step.as ?? "a"), lease);
              outcome = lease;
            } else if (step.do === "renew") {
              const renewed = await renewLease(ctx, handle(step.from));
              handles.set(String(step.as ?? step.from), renewed);
              outcome = renewed;
            } else {
              await releaseLease(ctx, handle(step.from));
              outcome = null;
            }
          } catch (error) {
            outcome = error;
          }
          fault.clearScript();
          const expected = step.expect as Expect | undefined;
          if (expected === undefined || expected.ok) {
            expect(isHoldfastError(outcome), `${where}: ${String(outcome)}`).toBe(false);
            if (expected?.renewal !== undefined) {
              expect((outcome as Lease).renewal, where).toBe(expected.renewal);
            }
          } else {
            expect(isHoldfastError(outcome), `${where}: ${String(outcome)}`).toBe(true);
            expect((outcome as { kind: string }).kind, where).toBe(expected.kind);
            if (expected.code !== undefined) {
              expect((outcome as { code?: string }).code, where).toBe(expected.code);
            }
          }
          if (expected?.requests !== undefined) {
            const requests = fault
              .requests()
              .slice(sent)
              .map((r) => r.operation);
            expect(requests, where).toEqual(expected.requests);
          }
          if (expected?.pauses !== undefined)
            expect(pauses.slice(paused), where).toEqual(expected.pauses);
          if (expected?.leases !== undefined)
            expect(await leaseCount(), where).toBe(expected.leases);
          break;
        }
        case "retire": {
          ops += 1;
          const opId = `OP${String(ops).padStart(4, "0")}`;
          const list = step.versions as number[];
          const [low, high] = (step.range as number[] | undefined) ?? [
            Math.min(...list),
            Math.max(...list),
          ];
          const branch = String(step.branch ?? "main");
          const cancelled = (step.cancelled as number[] | undefined) ?? [];
          const body =
            step.body !== undefined
              ? new TextEncoder().encode(String(step.body))
              : encodeJson({
                  schema: 1,
                  opId,
                  writerId: `W${opId}`,
                  owner: `O${opId}`,
                  branch,
                  state: step.state,
                  ownershipBoundMs: step.boundMs ?? 60_000,
                  versions: list.map((version) => ({
                    version,
                    manifestEtag: "etag",
                    cancelled: cancelled.includes(version),
                  })),
                });
          await memory.put(retirementKey(branch, low!, high!, opId), body);
          break;
        }
        case "fence":
          await memory.put(branchFenceKey(String(step.branch)), encodeJson({ schema: 1 }));
          break;
        case "delete-manifest":
          await memory.delete(manifestKey(String(step.branch ?? "main"), Number(step.version)));
          break;
        case "delete-lease":
          await memory.delete(handle(step.from).key);
          break;
        case "forge": {
          const lease = handle(step.from);
          await memory.put(
            lease.key,
            encodeLeaseBody(OTHER_SECRET, { ...lease, renewal: Number(step.renewal) }),
          );
          break;
        }
        case "snapshot": {
          const got = await memory.get(handle(step.from).key);
          if (!got) throw new Error(`${where}: no lease to snapshot`);
          snapshots.set(String(step.from), got.body);
          break;
        }
        case "restore":
          await memory.put(handle(step.from).key, snapshots.get(String(step.from))!);
          break;
        case "advance":
          readerNow += Number(step.readerMs ?? 0);
          storageNow += Number(step.storageMs ?? 0);
          break;
        default:
          throw new Error(`${where}: unknown step`);
      }
    }
  });
});
