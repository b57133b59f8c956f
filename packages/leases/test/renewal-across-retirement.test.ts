import { isHoldfastError } from "@holdfast/conditional-store";
import { holdfastLayout, manifestKey } from "@holdfast/dataset";
import { acquireLease, renewLease } from "@holdfast/leases";
import { describe, expect, it } from "vitest";
import { commitVersions, world } from "./helpers.js";

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

// A renewal must not promise protection the retirement already ended (invariant 1, L1).
describe("renewals across a retirement (leases)", () => {
  it("L1 a renewal whose term lapsed in flight, across a finished retirement, is not-found", async () => {
    const w = world();
    await commitVersions(w, 2);
    const lease = await acquireLease(w.reader, {
      format: holdfastLayout,
      branch: "main",
      version: 1,
      ttlMs: 60_000,
    });
    await w.storeTime.advance(59_000);
    const atRead = deferred();
    const finished = deferred();
    w.fault.on(
      { operation: "put", key: lease.key, precondition: "if-match" },
      { type: "before", run: () => w.storeTime.advance(3_000) }, // slow: the term lapses
    );
    w.fault.on(
      { operation: "list", key: /^_holdfast\/retirement\// },
      {
        type: "before",
        run: async () => {
          atRead.resolve();
          await finished.promise;
        },
      },
    );
    const renewing = renewLease(w.reader, lease).catch((e: unknown) => e);
    await atRead.promise;
    // A whole retirement of version 1 ends here: manifest, lease and record are all gone.
    await w.memory.delete(manifestKey("main", 1));
    await w.memory.delete(lease.key);
    finished.resolve();
    const outcome = await renewing;
    expect(isHoldfastError(outcome, "not-found")).toBe(true);
    expect((outcome as { code?: string }).code).toBe("VERSION_NOT_FOUND");
  });

  it("L1 a late renewal of a version that still exists succeeds after one manifest check", async () => {
    const w = world();
    await commitVersions(w, 1);
    const lease = await acquireLease(w.reader, {
      format: holdfastLayout,
      branch: "main",
      version: 1,
      ttlMs: 60_000,
    });
    await w.storeTime.advance(59_000);
    w.fault.on(
      { operation: "put", key: lease.key, precondition: "if-match" },
      { type: "before", run: () => w.storeTime.advance(3_000) },
    );
    w.fault.resetCounts();
    const renewed = await renewLease(w.reader, lease);
    expect(renewed.renewal).toBe(1);
    expect(w.fault.requestCounts()).toMatchObject({ put: 1, list: 1, head: 1 });
  });

  it("L1 an on-time renewal still costs two requests (no manifest check)", async () => {
    const w = world();
    await commitVersions(w, 1);
    const lease = await acquireLease(w.reader, {
      format: holdfastLayout,
      branch: "main",
      version: 1,
      ttlMs: 60_000,
    });
    await w.storeTime.advance(20_000);
    w.fault.resetCounts();
    await renewLease(w.reader, lease);
    expect(w.fault.requestCounts()).toMatchObject({ put: 1, list: 1, head: 0, get: 0 });
  });
});
