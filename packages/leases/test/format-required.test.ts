import { isHoldfastError } from "@holdfast/conditional-store";
import { FORMAT_REQUIRED, holdfastLayout } from "@holdfast/dataset";
import { describe, expect, it } from "vitest";
import { acquireLease, type Lease, renewLease, withLease } from "../src/index.js";
import { commitVersions, world } from "./helpers.js";

// docs/protocol.md §1.1: a lease names its version's manifest in the format
// the caller bound, never in a guessed one. A call without the dataset's format is a type
// error (each `@ts-expect-error` below fails the typecheck once the format is optional
// again) and, for a JavaScript caller, a typed refusal before any request.
describe("lease operations take the dataset's format", () => {
  it("invariant 6: acquireLease and withLease called without a format refuse with FORMAT_REQUIRED and send nothing", async () => {
    const w = world();
    await commitVersions(w, 1);
    const keysBefore = w.memory.keys();
    w.fault.resetCounts();
    const target = { branch: "main", version: 1, ttlMs: 60_000 };
    let read = false;
    const calls: [string, () => unknown][] = [
      // @ts-expect-error the format is required
      ["acquireLease", () => acquireLease(w.reader, target)],
      // @ts-expect-error the format is required
      ["withLease", () => withLease(w.reader, target, async () => (read = true))],
      // @ts-expect-error the format is required
      ["acquireLease, no options", () => acquireLease(w.reader)],
      // @ts-expect-error the format is required
      ["withLease, no options", () => withLease(w.reader, undefined, async () => (read = true))],
      // Refused before the other options are checked: the missing format is what the caller learns.
      // @ts-expect-error the format is required
      ["acquireLease, bad ttl", () => acquireLease(w.reader, { ...target, ttlMs: 0 })],
    ];
    for (const [name, call] of calls) {
      const error = await Promise.resolve()
        .then(call)
        .then(
          () => new Error(`${name} succeeded`),
          (e: unknown) => e,
        );
      expect({ name, error }).toMatchObject({
        name,
        error: { kind: "invalid-input", code: FORMAT_REQUIRED },
      });
    }
    expect(read).toBe(false);
    expect(w.fault.requests()).toEqual([]);
    expect(w.memory.keys()).toEqual(keysBefore);
  });
});

// A handle an earlier release wrote has no `manifestKey`. It still renews; a renewal whose
// term ran out in flight needs the manifest check (L1), and renewLease takes no format, so
// that renewal is refused rather than checked in a guessed layout.
describe("a lease handle without manifestKey (written by an earlier release)", () => {
  async function legacyLease() {
    const w = world();
    await commitVersions(w, 1);
    const acquired = await acquireLease(w.reader, {
      branch: "main",
      version: 1,
      ttlMs: 60_000,
      format: holdfastLayout,
    });
    const { manifestKey: _dropped, ...rest } = acquired;
    const legacy: Lease = rest;
    return { w, legacy };
  }

  it("L1 renews on time as before (2 requests, no manifest check)", async () => {
    const { w, legacy } = await legacyLease();
    await w.storeTime.advance(20_000);
    w.fault.resetCounts();
    const renewed = await renewLease(w.reader, legacy);
    expect(renewed.renewal).toBe(1);
    expect(w.fault.requestCounts()).toMatchObject({ put: 1, list: 1, head: 0, get: 0 });
  });

  it("L1 a renewal whose term lapsed in flight is refused LEASE_EXPIRED and its lease removed, though the version exists", async () => {
    const { w, legacy } = await legacyLease();
    await w.storeTime.advance(59_000);
    w.fault.on(
      { operation: "put", key: legacy.key, precondition: "if-match" },
      { type: "before", run: () => w.storeTime.advance(3_000) }, // slow: the term lapses
    );
    const outcome = await renewLease(w.reader, legacy).catch((e: unknown) => e);
    expect(isHoldfastError(outcome, "refused")).toBe(true);
    expect(outcome).toMatchObject({ code: "LEASE_EXPIRED", key: legacy.key });
    expect(await w.memory.head(legacy.key)).toBeNull();
    expect(await w.memory.head(holdfastLayout.manifestKey("main", 1))).not.toBeNull();
  });
});
