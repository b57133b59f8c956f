import { holdfastError } from "@holdfast/conditional-store";
import { FaultStore } from "@holdfast/conditional-store/testing";
import { describe, expect, it } from "vitest";
import {
  cancelVersions,
  commit,
  DEFAULT_OWNERSHIP_BOUND_MS,
  drain,
  type LeaseCensus,
  type RecoveryReport,
  type ReferenceCensus,
  readAdmission,
  readRecord,
  recoverRetirements,
  renewRetirement,
  seal,
} from "../src/index.js";
import { census, memoryContext, noLeases, noRefs } from "./helpers.js";

const versions = [
  { version: 1, manifestEtag: "e1" },
  { version: 2, manifestEtag: "e2" },
  { version: 3, manifestEtag: "e3" },
];

/** What a format's refusal looks like to recovery: typed, with a code, naming the file. */
function refusal() {
  return holdfastError(
    "invalid-input",
    "readManifest",
    "manifest _versions/dev/00000000000000000001.json is unreadable",
    { key: "_versions/dev/00000000000000000001.json", code: "MALFORMED_OBJECT" },
  );
}

const refusingLeases =
  (error: Error): LeaseCensus =>
  async () => {
    throw error;
  };
const refusingRefs =
  (error: Error): ReferenceCensus =>
  async () => {
    throw error;
  };

// docs/protocol.md §5.3: a sealed record whose census fails
// cannot be decided; it is given up before its commit (cancelled, then deleted), so no version
// of it stays refused to leases while the failure lasts, and the failure is thrown unchanged.
describe("a sealed record whose recovery census fails", () => {
  const cases = [
    ["the reference census refuses (owner live)", 0, "refs"],
    [
      "the reference census refuses (owner past its bound)",
      DEFAULT_OWNERSHIP_BOUND_MS + 2000,
      "refs",
    ],
    ["the lease census fails (owner past its bound)", DEFAULT_OWNERSHIP_BOUND_MS + 2000, "leases"],
  ] as const;
  it.each(cases)(
    "invariant 5: %s: given up before its commit, every version open, the failure thrown unchanged",
    async (_name, wait, failing) => {
      const { ctx, store, time } = memoryContext();
      const sealed = await seal(ctx, await drain(ctx, { branch: "main", versions, owner: "o" }));
      await time.advance(wait);
      const error = refusal();
      const thrown = await recoverRetirements(ctx, {
        // L12: the lease census found a lease on 2 before the reference census refused.
        leaseCensus: failing === "leases" ? refusingLeases(error) : census([[2, "lease"]]),
        referenceCensus: failing === "refs" ? refusingRefs(error) : noRefs,
      }).catch((e: unknown) => e);
      expect(thrown).toBe(error);
      expect(thrown).toMatchObject({ kind: "invalid-input", code: "MALFORMED_OBJECT" });
      expect(await readRecord(ctx, sealed.key)).toBeNull();
      expect(store.keys()).toEqual([]);
      for (const { version } of versions) {
        expect((await readAdmission(ctx, "main", version)).state).toBe("open");
      }
      // Once the failure is gone, a later recovery finds nothing left to do.
      const later = await recoverRetirements(ctx, {
        leaseCensus: noLeases,
        referenceCensus: noRefs,
      });
      expect(later).toEqual({ committed: [], cancelled: [], live: [], retained: [] });
    },
  );

  it("invariant 5: the give-up is one if-match rewrite to cancelled with a new owner, then the DELETE; the old owner's next transition is fenced", async () => {
    const { ctx: base } = memoryContext();
    const sealed = await seal(base, await drain(base, { branch: "main", versions, owner: "o" }));
    let cancelled: { state: string; owner: string } | undefined;
    // What the give-up wrote, read just before its DELETE.
    const watched = new FaultStore(base.store).on(
      { operation: "delete", key: sealed.key },
      {
        type: "before",
        run: async (inner) => {
          const got = await inner.get(sealed.key);
          cancelled = JSON.parse(new TextDecoder().decode(got!.body));
        },
      },
    );
    const ctx = { ...base, store: watched };
    await expect(
      recoverRetirements(ctx, {
        leaseCensus: noLeases,
        referenceCensus: refusingRefs(refusal()),
        owner: "recoverer",
      }),
    ).rejects.toMatchObject({ code: "MALFORMED_OBJECT" });
    const writes = watched
      .requests()
      .filter((r) => r.key.startsWith("_holdfast/retirement/"))
      .filter((r) => r.operation === "put" || r.operation === "delete")
      .map((r) => ({ operation: r.operation, key: r.key, precondition: r.precondition }));
    expect(writes).toEqual([
      { operation: "put", key: sealed.key, precondition: { ifMatch: sealed.etag } },
      { operation: "delete", key: sealed.key, precondition: undefined },
    ]);
    expect(cancelled).toMatchObject({ state: "cancelled", owner: "recoverer" });
    await expect(commit(base, sealed)).rejects.toMatchObject({ code: "RetirementFenced" });
  });

  it("invariant 5: the other records are still resolved, but nothing is decided after the failure: a later sealed record is given up, not committed; the first failure is thrown after onCensusFailure", async () => {
    const { ctx, store, time } = memoryContext();
    const owner = "crashed";
    // Keys sort by branch: a-gone (cancelled), b-stale (drain), dev (sealed, refused),
    // main (sealed, a lease on 2), zeta (committed). The refusal comes before main's record.
    const done = await drain(ctx, { branch: "a-gone", versions, owner });
    await cancelVersions(ctx, done, new Map(versions.map((v) => [v.version, "lease"])));
    const stale = await drain(ctx, { branch: "b-stale", versions, owner });
    const dev = await seal(ctx, await drain(ctx, { branch: "dev", versions, owner }));
    const main = await seal(ctx, await drain(ctx, { branch: "main", versions, owner }));
    const zeta = await commit(
      ctx,
      await seal(ctx, await drain(ctx, { branch: "zeta", versions, owner })),
    );
    await time.advance(DEFAULT_OWNERSHIP_BOUND_MS + 2000);
    const error = refusal();
    const reports: RecoveryReport[] = [];
    const thrown = await recoverRetirements(ctx, {
      leaseCensus: census([[2, "lease"]]),
      referenceCensus: async (branch) => {
        if (branch === "dev") throw error;
        return noRefs();
      },
      onCensusFailure: async (report) => {
        reports.push(report);
      },
    }).catch((e: unknown) => e);
    expect(thrown).toBe(error);
    expect(reports).toHaveLength(1);
    const [report] = reports;
    expect(report!.cancelled.sort()).toEqual([done.key, stale.key, dev.key, main.key].sort());
    expect(report!.committed.map((h) => h.key)).toEqual([zeta.key]);
    expect(report!.retained).toEqual([]);
    expect(store.keys().sort()).toEqual([zeta.key]);
    for (const { version } of versions) {
      expect((await readAdmission(ctx, "dev", version)).state).toBe("open");
      expect((await readAdmission(ctx, "b-stale", version)).state).toBe("open");
      expect((await readAdmission(ctx, "zeta", version)).state).toBe("committed");
    }
    // main: listed after the refusal, so given up without its census (refuse before
    // deciding): every version open again, the leased 2 included.
    for (const { version } of versions) {
      expect((await readAdmission(ctx, "main", version)).state).toBe("open");
    }
  });

  it("an error of onCensusFailure is thrown instead of the census failure (an unknown outcome stays unknown)", async () => {
    const { ctx } = memoryContext();
    await seal(ctx, await drain(ctx, { branch: "dev", versions, owner: "o" }));
    const later = holdfastError("unresolved", "committed", "lost", { key: "k" });
    await expect(
      recoverRetirements(ctx, {
        leaseCensus: noLeases,
        referenceCensus: refusingRefs(refusal()),
        onCensusFailure: async () => {
          throw later;
        },
      }),
    ).rejects.toBe(later);
  });

  it("L6 a give-up that loses its if-match leaves the live owner's write; the failure is still thrown", async () => {
    const { ctx: base } = memoryContext();
    const sealed = await seal(base, await drain(base, { branch: "main", versions, owner: "o" }));
    let renewed: Awaited<ReturnType<typeof renewRetirement>> | undefined;
    // The live owner's heartbeat lands between recovery's read and its give-up.
    const faulty = new FaultStore(base.store).on(
      { operation: "put", precondition: "if-match" },
      {
        type: "before",
        run: async () => {
          renewed = await renewRetirement(base, sealed);
        },
      },
    );
    await expect(
      recoverRetirements(
        { ...base, store: faulty },
        { leaseCensus: noLeases, referenceCensus: refusingRefs(refusal()) },
      ),
    ).rejects.toMatchObject({ code: "MALFORMED_OBJECT" });
    const stored = await readRecord(base, sealed.key);
    expect(stored?.etag).toBe(renewed?.etag);
    expect(stored?.record.state).toBe("sealed");
  });
});
