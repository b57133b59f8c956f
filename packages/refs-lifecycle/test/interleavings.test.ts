import { isHoldfastError } from "@holdfast/conditional-store";
import { manifestKey } from "@holdfast/dataset";
import { activeVersions, commit, drain, seal } from "@holdfast/retirement";
import { describe, expect, it } from "vitest";
import {
  censusReferences,
  createBranch,
  createTag,
  deleteBranch,
  deleteTag,
  getBranch,
  getTag,
  holdfastFormat,
  listBranches,
  listTags,
  recoverReferences,
  replaceBranchMetadata,
  updateTag,
} from "../src/index.js";
import { commits, keysUnder, releasedReadAll, world } from "./support.js";

/** Small deterministic PRNG (mulberry32) so a failing seed replays exactly. */
function rng(seed: number): (n: number) => number {
  let a = seed >>> 0;
  return (n) => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return Math.floor((((t ^ (t >>> 14)) >>> 0) / 4294967296) * n);
  };
}

const SEEDS = Array.from({ length: 48 }, (_, i) => i + 1);

describe("random interleavings of reference operations", () => {
  it.each(SEEDS)(
    "seed %i: released-schema files, no dangling reference, nothing left after recovery",
    async (seed) => {
      const random = rng(seed);
      const rgw = seed % 2 === 0;
      const { ctx, faults, memory, time } = world({
        seed,
        memory: rgw ? { etagMode: "content-md5", conditionalDelete: false } : {},
      });
      await commits(ctx, "main", 4);
      await createBranch(
        ctx,
        { name: "p", parent: { branch: "main", version: 1 } },
        { format: holdfastFormat },
      );
      await commits(ctx, "p", 2, { branch: "main", version: 1 });
      // Every request yields a random number of turns, so concurrent operations interleave.
      faults.on(
        { times: Number.POSITIVE_INFINITY },
        {
          type: "before",
          run: async () => {
            for (let i = random(8); i > 0; i -= 1) await new Promise((r) => setImmediate(r));
          },
        },
      );
      // Occasionally a lost answer (applied or not) on a reference write.
      faults.on(
        { operation: "put", key: /^_refs\//, nth: 1 + random(6), times: 2 },
        { type: random(2) === 0 ? "apply-then-lose" : "lose-before-apply" },
      );

      const tagNames = ["a", "b", "c"];
      const branchNames = ["x", "y", "p"];
      const target = () =>
        random(3) === 0
          ? { branch: "p", version: 1 + random(2) }
          : { branch: "main", version: 1 + random(4) };
      const parentOf = () =>
        random(2) === 0 ? { branch: "p", version: 1 + random(2) } : { branch: "main", version: 1 };
      const pick = <T>(xs: T[]) => xs[random(xs.length)]!;
      type Op = { kind: "tag" | "branch"; op: string; name: string; run: () => Promise<unknown> };
      const operation = (): Op => {
        const tag = pick(tagNames);
        const branch = pick(branchNames);
        const fresh = pick(["x", "y"]);
        switch (random(8)) {
          case 0:
            return {
              kind: "tag",
              op: "create",
              name: tag,
              run: () =>
                createTag(ctx, { name: tag, target: target() }, { format: holdfastFormat }),
            };
          case 1:
            return {
              kind: "tag",
              op: "update",
              name: tag,
              run: () =>
                updateTag(ctx, { name: tag, target: target() }, { format: holdfastFormat }),
            };
          case 2:
            return {
              kind: "tag",
              op: "delete",
              name: tag,
              run: () => deleteTag(ctx, tag, { format: holdfastFormat }),
            };
          case 3:
            return {
              kind: "branch",
              op: "create",
              name: fresh,
              run: () =>
                createBranch(ctx, { name: fresh, parent: parentOf() }, { format: holdfastFormat }),
            };
          case 4:
            return {
              kind: "branch",
              op: "delete",
              name: branch,
              run: () => deleteBranch(ctx, branch, { format: holdfastFormat }),
            };
          case 5:
            return {
              kind: "branch",
              op: "metadata",
              name: branch,
              run: () =>
                replaceBranchMetadata(
                  ctx,
                  { name: branch, metadata: { s: `${seed}` } },
                  { format: holdfastFormat },
                ),
            };
          case 6:
            return { kind: "tag", op: "cleanup", name: "", run: () => retire(pick(["main", "p"])) };
          default:
            return {
              kind: "tag",
              op: "get",
              name: tag,
              run: () => getTag(ctx, tag, { format: holdfastFormat }),
            };
        }
      };
      // A cleaner racing the publications: drain, seal, reference census, commit, delete
      // what committed (latest version always kept), remove the record.
      const retire = async (branch: string) => {
        const candidates = [];
        for (let version = 1; version <= 3; version += 1) {
          if (random(2) === 0) continue;
          const meta = await ctx.store.head(manifestKey(branch, version));
          if (meta) candidates.push({ version, manifestEtag: meta.etag });
        }
        if (candidates.length === 0) return;
        const sealed = await seal(
          ctx,
          await drain(ctx, { branch, versions: candidates, owner: ctx.ids.next() }),
        );
        const kept = await censusReferences(ctx, { format: holdfastFormat })(
          branch,
          activeVersions(sealed.record),
        );
        const done = await commit(ctx, sealed, { cancel: kept });
        if (done.record.state === "committed") {
          for (const version of activeVersions(done.record)) {
            await ctx.store.delete(manifestKey(branch, version));
          }
        }
        await ctx.store.delete(done.key);
      };
      // Invariant 2 with branch deletion: no reference names a version that is gone.
      const expectNoDanglingReference = async () => {
        for (const tag of await listTags(ctx, { format: holdfastFormat })) {
          const key = manifestKey(tag.target.branch, tag.target.version);
          expect(
            await memory.head(key),
            `tag ${tag.name} names a version that is gone`,
          ).not.toBeNull();
        }
        for (const branch of await listBranches(ctx, { format: holdfastFormat })) {
          if (!branch.parent) continue;
          const key = manifestKey(branch.parent.branch, branch.parent.version);
          expect(
            await memory.head(key),
            `${branch.name} forks from a version that is gone`,
          ).not.toBeNull();
        }
      };
      const present = async (kind: "tag" | "branch", name: string) =>
        (kind === "tag"
          ? await getTag(ctx, name, { format: holdfastFormat })
          : await getBranch(ctx, name, { format: holdfastFormat })) !== null;
      // Names known absent (deleted, or never created) at the end of the previous round.
      const absent = new Set<string>(["tag:a", "tag:b", "tag:c", "branch:x", "branch:y"]);

      for (let round = 0; round < 6; round += 1) {
        const ops = Array.from({ length: 3 + random(3) }, operation);
        const results = await Promise.allSettled(ops.map((o) => o.run()));
        const created = new Set<string>();
        results.forEach((result, i) => {
          const o = ops[i]!;
          // Every failure is a typed holdfast error (never a raw exception).
          if (result.status === "rejected") expect(isHoldfastError(result.reason)).toBe(true);
          const maybeLanded =
            result.status === "fulfilled" || isHoldfastError(result.reason, "unresolved");
          if (o.op === "create" && maybeLanded) created.add(`${o.kind}:${o.name}`);
          if (o.op === "delete" && result.status === "fulfilled") absent.add(`${o.kind}:${o.name}`);
        });
        // Invariant 2: a name deleted (or absent) stays absent unless a create of it may have
        // succeeded in this round.
        for (const id of [...absent]) {
          const [kind, name] = id.split(":") as ["tag" | "branch", string];
          if (created.has(id)) {
            if (await present(kind, name)) absent.delete(id);
          } else {
            expect(await present(kind, name), `${id} came back without a create`).toBe(false);
          }
        }
        await releasedReadAll(memory); // R7 after every round
        // No reference names a version that is gone (unless a withdrawal's outcome is unknown).
        const unknown = results.some(
          (r) => r.status === "rejected" && isHoldfastError(r.reason, "unresolved"),
        );
        if (!unknown) await expectNoDanglingReference();
      }

      // Quiesce, let every intent expire, recover.
      faults.clearScript();
      await time.advance(16 * 60_000);
      await recoverReferences(ctx, { format: holdfastFormat });

      expect(keysUnder(memory, "_holdfast/refs/")).toEqual([]);
      await releasedReadAll(memory);
      await expectNoDanglingReference();
      // A deleted branch left no incarnation state behind.
      for (const name of branchNames) {
        if (name !== "p" && (await getBranch(ctx, name, { format: holdfastFormat })) === null) {
          expect(keysUnder(memory, `_holdfast/leases/${name}/`)).toEqual([]);
          expect(keysUnder(memory, `_holdfast/retirement/${name}/`)).toEqual([]);
        }
      }
    },
  );
});
