import { encodeJson, isHoldfastError } from "@holdfast/conditional-store";
import { FaultStore } from "@holdfast/conditional-store/testing";
import { holdfastLayout, initDataset } from "@holdfast/dataset";
import { describe, expect, it } from "vitest";
import {
  abandon,
  cancelVersions,
  commit,
  confirmCommit,
  drain,
  finalize,
  isFenced,
  readAdmission,
  readRecord,
  recoverRetirements,
  seal,
  UnresolvedTransitionError,
} from "../src/index.js";
import { census, memoryContext, noLeases, noRefs } from "./helpers.js";

const DATASET_KEY = "_holdfast/dataset.json";

const candidates = [
  { version: 2, manifestEtag: "e2" },
  { version: 1, manifestEtag: "e1" },
  { version: 3, manifestEtag: "e3" },
];

describe("retirement state machine", () => {
  it("drains, seals, commits and finalizes, leaving nothing behind", async () => {
    const { ctx, store } = memoryContext();
    await initDataset(ctx);
    const h = await drain(ctx, { branch: "main", versions: candidates, owner: "01OWNER" });
    expect(h.key).toMatch(/^_holdfast\/retirement\/main\/0{19}1-0{19}3-[0-9A-Z]{26}\.json$/);
    expect(h.record.versions.map((v) => v.version)).toEqual([1, 2, 3]);
    expect((await readAdmission(ctx, "main", 2)).state).toBe("draining");
    const sealed = await seal(ctx, h, { cancel: new Map([[2, "lease"]]) });
    expect((await readAdmission(ctx, "main", 2)).state).toBe("open");
    expect((await readAdmission(ctx, "main", 1)).state).toBe("sealed");
    const committed = await commit(ctx, sealed, { cancel: new Map([[3, "tag"]]) });
    expect(committed.record.versions).toEqual([
      { version: 1, manifestEtag: "e1", cancelled: false },
      { version: 2, manifestEtag: "e2", cancelled: true, reason: "lease" },
      { version: 3, manifestEtag: "e3", cancelled: true, reason: "tag" },
    ]);
    expect((await readAdmission(ctx, "main", 1)).state).toBe("committed");
    const deleted: number[][] = [];
    const view = (await readRecord(ctx, committed.key))!;
    const cutoffs: string[] = [];
    await finalize(ctx, committed, {
      deleteLeases: async (_b, v, o) => {
        deleted.push([...v]);
        cutoffs.push(o.writtenBefore.toISOString());
      },
      presentManifests: holdfastPresent(ctx),
      leasesWrittenBefore: view.lastModified,
    });
    expect(deleted).toEqual([[1]]);
    // Only leases written before the view of the record (docs/protocol.md §5.4).
    expect(cutoffs).toEqual([view.lastModified!.toISOString()]);
    expect(store.keys()).toEqual([DATASET_KEY]);
  });

  it("every write carries a fresh writerId, so a rewrite changes the bytes", async () => {
    const { ctx } = memoryContext();
    const h = await drain(ctx, { branch: "main", versions: candidates, owner: "01OWNER" });
    const again = await cancelVersions(ctx, h, new Map());
    expect(again.record.writerId).not.toBe(h.record.writerId);
    expect(again.etag).not.toBe(h.etag);
  });

  it("rejects bad input before writing", async () => {
    const { ctx, store } = memoryContext();
    for (const versions of [
      [],
      [{ version: 0, manifestEtag: "e" }],
      [{ version: 1, manifestEtag: "" }],
    ]) {
      const error = await drain(ctx, { branch: "main", versions, owner: "o" }).catch((e) => e);
      expect(isHoldfastError(error, "invalid-input")).toBe(true);
    }
    expect(store.keys()).toEqual([]);
  });

  it("cancelling every version makes the record cancelled", async () => {
    const { ctx } = memoryContext();
    const h = await drain(ctx, { branch: "main", versions: candidates, owner: "o" });
    const all = await cancelVersions(
      ctx,
      h,
      new Map([
        [1, "lease"],
        [2, "lease"],
        [3, "tag"],
      ]),
    );
    expect(all.record.state).toBe("cancelled");
  });

  it("L5 a drain dropped in-process is cancelled and removed at once", async () => {
    const { ctx, store } = memoryContext();
    const h = await drain(ctx, { branch: "main", versions: candidates, owner: "o" });
    await abandon(ctx, h);
    expect(store.keys()).toEqual([]);
    expect((await readAdmission(ctx, "main", 1)).state).toBe("open");
  });

  it("a stale owner is fenced: its next transition conflicts", async () => {
    const { ctx, time } = memoryContext();
    const h = await drain(ctx, { branch: "main", versions: candidates, owner: "o" });
    await time.advance(16 * 60 * 1000);
    const report = await recoverRetirements(ctx, {
      leaseCensus: noLeases,
      referenceCensus: noRefs,
    });
    expect(report.cancelled).toEqual([h.key]);
    const error = await seal(ctx, h).catch((e) => e);
    expect(isFenced(error)).toBe(true);
  });

  it("an unknown commit outcome stops the actor until a read shows it is its own", async () => {
    const { ctx: base } = memoryContext();
    const faulty = new FaultStore(base.store);
    const ctx = { ...base, store: faulty };
    const h = await seal(
      ctx,
      await drain(ctx, { branch: "main", versions: candidates, owner: "o" }),
    );
    // every copy of the commit is lost before it reaches the store
    faulty.on({ operation: "put", precondition: "if-match" }, { type: "lose-before-apply" });
    faulty.on(
      { operation: "put", precondition: "if-match", nth: 2, times: 10 },
      { type: "lose-before-apply" },
    );
    const error = await commit(ctx, h).catch((e) => e);
    expect(error).toBeInstanceOf(UnresolvedTransitionError);
    expect(isHoldfastError(error, "unresolved")).toBe(true);
    const stillUnknown = await confirmCommit(ctx, error).catch((e) => e);
    expect(isHoldfastError(stillUnknown, "unresolved")).toBe(true);
    expect((await readRecord(ctx, h.key))?.record.state).toBe("sealed");
  });

  it("an applied commit whose answer was lost is confirmed as its own", async () => {
    const { ctx: base } = memoryContext();
    const faulty = new FaultStore(base.store);
    const ctx = { ...base, store: faulty };
    const h = await seal(
      ctx,
      await drain(ctx, { branch: "main", versions: candidates, owner: "o" }),
    );
    faulty.on({ operation: "put", precondition: "if-match" }, { type: "apply-then-lose" });
    const committed = await commit(ctx, h);
    expect(committed.record.state).toBe("committed");
    expect((await readRecord(ctx, h.key))?.record.writerId).toBe(committed.record.writerId);
  });

  it("a drain whose answer was lost after it applied resolves as applied", async () => {
    const { ctx: base } = memoryContext();
    const faulty = new FaultStore(base.store);
    const ctx = { ...base, store: faulty };
    faulty.on({ operation: "put", precondition: "create" }, { type: "apply-then-lose" });
    const h = await drain(ctx, { branch: "main", versions: candidates, owner: "o" });
    expect((await readRecord(ctx, h.key))?.record.writerId).toBe(h.record.writerId);
    expect((await seal(ctx, h)).record.state).toBe("sealed");
  });

  it("finalize refuses while a recorded manifest is still present", async () => {
    const { ctx, store } = memoryContext();
    await initDataset(ctx);
    await store.put(`_versions/main/${"1".padStart(20, "0")}.json`, encodeJson({}));
    const h = await commit(
      ctx,
      await seal(ctx, await drain(ctx, { branch: "main", versions: candidates, owner: "o" })),
    );
    const error = await finalize(ctx, h, {
      deleteLeases: async () => {},
      presentManifests: holdfastPresent(ctx),
      leasesWrittenBefore: (await store.head(h.key))!.lastModified,
    }).catch((e) => e);
    expect(isHoldfastError(error, "refused")).toBe(true);
    expect((await readRecord(ctx, h.key))?.record.state).toBe("committed");
  });

  it("L8 a finalize that fails deleting leases keeps the committed record; recovery completes it", async () => {
    const { ctx, store } = memoryContext();
    await initDataset(ctx);
    const leases = new Set(["1", "2"]);
    const h = await commit(
      ctx,
      await seal(ctx, await drain(ctx, { branch: "main", versions: candidates, owner: "o" })),
    );
    const error = await finalize(ctx, h, {
      deleteLeases: async () => {
        leases.delete("1");
        throw new Error("injected lease delete failure");
      },
      presentManifests: holdfastPresent(ctx),
      leasesWrittenBefore: (await store.head(h.key))!.lastModified,
    }).catch((e) => e);
    expect(error).toMatchObject({ message: "injected lease delete failure" });
    expect(store.keys()).toEqual([DATASET_KEY, h.key]);
    const report = await recoverRetirements(ctx, {
      leaseCensus: noLeases,
      referenceCensus: noRefs,
    });
    expect(report.committed.map((c) => c.key)).toEqual([h.key]);
    await finalize(ctx, report.committed[0]!, {
      deleteLeases: async () => {
        leases.clear();
      },
      presentManifests: holdfastPresent(ctx),
    });
    expect(leases.size).toBe(0);
    expect(store.keys()).toEqual([DATASET_KEY]);
  });

  it("finalize has no default manifest check: without the format's it refuses (invalid-input) and removes nothing", async () => {
    const { ctx, store } = memoryContext();
    // A Lance table: its manifests are _versions/{n}.manifest, which a check assuming
    // holdfast's layout would not see, so every retired version would look gone
    // (docs/protocol.md §1.1).
    await store.put("_versions/1.manifest", new Uint8Array([1]));
    const h = await commit(
      ctx,
      await seal(ctx, await drain(ctx, { branch: "main", versions: candidates, owner: "o" })),
    );
    let leasesDeleted = false;
    const options = {
      deleteLeases: async () => {
        leasesDeleted = true;
      },
    } as unknown as Parameters<typeof finalize>[2];
    const error = await finalize(ctx, h, options).catch((e) => e);
    expect(error).toMatchObject({ kind: "invalid-input", operation: "finalize" });
    expect(leasesDeleted).toBe(false);
    expect(store.keys()).toEqual([h.key, "_versions/1.manifest"]);
  });
});

describe("finalize's view of the record", () => {
  it("refuses (invalid-input) without a storage time for its view of the record, and sends nothing", async () => {
    const { ctx, store } = memoryContext();
    await initDataset(ctx);
    const h = await commit(
      ctx,
      await seal(ctx, await drain(ctx, { branch: "main", versions: candidates, owner: "o" })),
    );
    // A handle as written by this process carries no Last-Modified.
    expect(h.lastModified).toBeUndefined();
    let called = false;
    const error = await finalize(ctx, h, {
      deleteLeases: async () => {
        called = true;
      },
      presentManifests: async () => {
        called = true;
        return new Set();
      },
    }).catch((e) => e);
    expect(error).toMatchObject({ kind: "invalid-input", operation: "finalize" });
    expect(called).toBe(false);
    expect(store.keys()).toEqual([DATASET_KEY, h.key]);
  });

  it("deletes only leases written before the earlier of the handle's Last-Modified and the given time", async () => {
    const { ctx } = memoryContext();
    await initDataset(ctx);
    const h = await commit(
      ctx,
      await seal(ctx, await drain(ctx, { branch: "main", versions: candidates, owner: "o" })),
    );
    const view = (await readRecord(ctx, h.key))!;
    const early = new Date(view.lastModified!.getTime() - 60_000);
    const late = new Date(view.lastModified!.getTime() + 60_000);
    const seen: number[] = [];
    for (const given of [early, late]) {
      await finalize(ctx, view, {
        deleteLeases: async (_b, _v, o) => {
          seen.push(o.writtenBefore.getTime());
          throw new Error("stop before the record goes");
        },
        presentManifests: holdfastPresent(ctx),
        leasesWrittenBefore: given,
      }).catch(() => {});
    }
    expect(seen).toEqual([early.getTime(), view.lastModified!.getTime()]);
  });
});

describe("recoverRetirements", () => {
  it("leaves a live drain alone, cancels it past its bound", async () => {
    const { ctx, store, time } = memoryContext();
    const h = await drain(ctx, { branch: "main", versions: candidates, owner: "o" });
    let report = await recoverRetirements(ctx, { leaseCensus: noLeases, referenceCensus: noRefs });
    expect(report.live.map((l) => l.key)).toEqual([h.key]);
    await time.advance(15 * 60 * 1000 + 1000);
    report = await recoverRetirements(ctx, { leaseCensus: noLeases, referenceCensus: noRefs });
    expect(report.cancelled).toEqual([h.key]);
    expect(store.keys()).toEqual([]);
  });

  it("L12 a crashed seal with an active lease is cancelled for that version at once", async () => {
    const { ctx, time } = memoryContext();
    const h = await seal(
      ctx,
      await drain(ctx, { branch: "main", versions: candidates, owner: "o" }),
    );
    await time.advance(1000);
    const report = await recoverRetirements(ctx, {
      leaseCensus: census([[2, "lease"]]),
      referenceCensus: noRefs,
    });
    expect(report.retained).toEqual([{ branch: "main", version: 2, reason: "lease" }]);
    expect((await readAdmission(ctx, "main", 2)).state).toBe("open");
    expect((await readAdmission(ctx, "main", 1)).state).toBe("committed");
    expect(report.committed.map((c) => c.key)).toEqual([h.key]);
  });

  it("L10 recovery of a seal respects references independent of policy", async () => {
    const { ctx, store, time } = memoryContext();
    await seal(ctx, await drain(ctx, { branch: "main", versions: candidates, owner: "o" }));
    await time.advance(16 * 60 * 1000);
    const report = await recoverRetirements(ctx, {
      leaseCensus: noLeases,
      referenceCensus: census([
        [1, "branch-lineage"],
        [2, "tag"],
        [3, "intent"],
      ]),
    });
    expect(report.committed).toEqual([]);
    expect(report.retained.map((r) => r.reason)).toEqual(["branch-lineage", "tag", "intent"]);
    expect(store.keys()).toEqual([]);
  });

  it("L6 a recovery commit does not outlive the live owner's cancellation", async () => {
    const { ctx: base, time } = memoryContext();
    const h = await seal(
      base,
      await drain(base, { branch: "main", versions: candidates, owner: "o" }),
    );
    await time.advance(16 * 60 * 1000);
    const faulty = new FaultStore(base.store);
    // the live owner cancels everything between recovery's read and its commit
    faulty.on(
      { operation: "put", precondition: "if-match" },
      { type: "before", run: () => abandon(base, h) },
    );
    const report = await recoverRetirements(
      { ...base, store: faulty },
      {
        leaseCensus: noLeases,
        referenceCensus: noRefs,
      },
    );
    expect(report.committed).toEqual([]);
    expect((await readAdmission(base, "main", 1)).state).toBe("open");
  });
});

// --- utils ---

/** The holdfast format's present-manifest check, as cleanup hands it to finalize. */
function holdfastPresent(ctx: Parameters<typeof finalize>[0]) {
  return (branch: string, versions: readonly number[]) =>
    holdfastLayout.presentManifests(ctx, branch, versions);
}
