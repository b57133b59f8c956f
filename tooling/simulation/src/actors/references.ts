import { isHoldfastError } from "@holdfast/conditional-store";
import {
  createBranch,
  createTag,
  deleteBranch,
  deleteTag,
  holdfastFormat,
  updateTag,
} from "@holdfast/refs-lifecycle";
import { type BranchModel, show, type TagModel } from "../checks.js";
import { OWNERSHIP_BOUND_MS } from "../config.js";
import type { SimulationWorld } from "../world.js";

/**
 * Taggers: each round creates, moves or deletes one of its own tags; the {@link TagModel}
 * records what each answer promised.
 */
export function spawnTaggers(world: SimulationWorld): void {
  const { config, sched } = world;
  world.spawnEach("tagger", config.taggers, async (ctx, t) => {
    const mine: TagModel[] = [];
    for (let r = 0; r < config.rounds; r += 1) {
      await sched.sleep(sched.int(0, 3000));
      const roll = sched.random();
      const updatable = mine.filter((m) => m.state === "active");
      const deletable = mine.filter((m) => m.state === "active" || m.state === "deleting");
      if (deletable.length > 0 && roll < 0.3) {
        const tag = sched.pick(deletable);
        // From here the tag may vanish (recovery or a retry may finish the deletion):
        // it protects its promised version only while its canonical file is visible.
        const before = { state: tag.state, settled: tag.settled };
        tag.state = "deleting";
        tag.settled = false;
        try {
          await deleteTag(ctx, tag.name, {
            format: holdfastFormat,
            ownershipBoundMs: OWNERSHIP_BOUND_MS,
          });
          tag.state = "deleted";
          world.note(`deleteTag ${tag.name} ok`);
          world.bump("tagsDeleted");
        } catch (error) {
          world.tolerate(ctx, error, "tagDeleteFailed", `deleteTag ${tag.name}`);
          if (isHoldfastError(error, "not-found")) {
            // Definite: no canonical and no deletion in flight (an earlier deletion whose
            // answer was lost finished, or it never landed): it must never be visible again.
            tag.state = "deleted";
          } else if (!isHoldfastError(error, "unresolved", "ambiguous")) {
            // Definite failure: the prior state is restored exactly.
            tag.state = before.state;
            tag.settled = before.settled;
          }
        }
        continue;
      }
      if (updatable.length > 0 && roll < 0.6) {
        const tag = sched.pick(updatable);
        const target = world.pickTarget(0.2);
        const settledBefore = tag.settled;
        tag.settled = false;
        try {
          await updateTag(
            ctx,
            { name: tag.name, target },
            { format: holdfastFormat, ownershipBoundMs: OWNERSHIP_BOUND_MS },
          );
          tag.promised = target;
          tag.settled = true;
          world.note(`updateTag ${tag.name} -> ${show(target)} ok`);
          world.bump("tagsUpdated");
        } catch (error) {
          world.tolerate(ctx, error, "tagUpdateFailed", `updateTag ${tag.name} -> ${show(target)}`);
          // A definite failure left (or restored) the prior content.
          if (!isHoldfastError(error, "unresolved", "ambiguous")) tag.settled = settledBefore;
        }
        continue;
      }
      const target = world.pickTarget(0.2);
      const tag: TagModel = {
        name: `t${config.seed}-${t}-${r}`,
        promised: null,
        settled: false,
        state: "active",
      };
      world.tags.push(tag);
      mine.push(tag);
      try {
        await createTag(
          ctx,
          { name: tag.name, target },
          { format: holdfastFormat, ownershipBoundMs: OWNERSHIP_BOUND_MS },
        );
        tag.promised = target;
        tag.settled = true;
        world.note(`createTag ${tag.name} -> ${show(target)} ok`);
        world.bump("tagsCreated");
      } catch (error) {
        world.tolerate(ctx, error, "tagCreateFailed", `createTag ${tag.name} -> ${show(target)}`);
        if (!isHoldfastError(error, "unresolved", "ambiguous")) tag.state = "never";
      }
    }
  });
}

/**
 * Branchers: each round creates a branch (forked from main or from another branch),
 * commits on one of its own, or deletes one; after its rounds it deletes the branch whose
 * record a cleaner drains next, at once; the {@link BranchModel} records what each answer
 * promised.
 */
export function spawnBranchers(world: SimulationWorld): void {
  const { config, sched } = world;
  world.spawnEach("brancher", config.branchers, async (ctx, b) => {
    const mine: BranchModel[] = [];
    for (let r = 0; r < config.rounds; r += 1) {
      await sched.sleep(sched.int(0, 3000));
      const roll = sched.random();
      const committable = mine.filter((m) => m.created && m.state === "active");
      const deletable = mine.filter((m) => m.state === "active" || m.state === "deleting");
      if (deletable.length > 0 && roll < 0.25) {
        await remove(sched.pick(deletable), false);
        continue;
      }
      if (committable.length > 0 && (roll < 0.7 || committable.length >= 3)) {
        const branch = sched.pick(committable);
        // Version 1 of a branch names its fork point as parent (lineage); later
        // versions name their predecessor on the branch (commitVersion's default).
        const parent = branch.commits === 0 ? branch.fork : undefined;
        if (await world.commitOne(ctx, branch.name, parent)) branch.commits += 1;
        continue;
      }
      const branch: BranchModel = {
        name: `b${config.seed}-${b}-${r}`,
        fork: world.pickTarget(0.3),
        created: false,
        state: "active",
        commits: 0,
      };
      world.branches.push(branch);
      mine.push(branch);
      try {
        await createBranch(
          ctx,
          { name: branch.name, parent: branch.fork },
          { format: holdfastFormat, ownershipBoundMs: OWNERSHIP_BOUND_MS },
        );
        branch.created = true;
        world.note(`createBranch ${branch.name} at ${show(branch.fork)} ok`);
        world.bump("branchesCreated");
      } catch (error) {
        const what = `createBranch ${branch.name} at ${show(branch.fork)}`;
        world.tolerate(ctx, error, "branchCreateFailed", what);
        if (!isHoldfastError(error, "unresolved", "ambiguous")) branch.state = "never";
      }
    }
    // Then it waits (up to 30 s) for a cleaner to drain a record of one of its branches and
    // deletes that branch at once (forced: leases do not stop it), so the teardown lands
    // inside the run retiring its versions (around the seal, the commit and the retired
    // floor), or before the drain's re-issue when its answer was lost, which then writes
    // the record again over the torn-down branch (docs/protocol.md §2.1, F1 "A branch torn
    // down under a record"). Branch versions are retirable only once older than the
    // minimum version age, mostly after the brancher's rounds.
    const drained = await world.nextRecord("draining", 30_000, ({ branch }) =>
      mine.some((m) => m.name === branch && m.state === "active"),
    );
    const torn = mine.find((m) => m.name === drained?.branch && m.state === "active");
    if (torn) {
      world.bump("branchesTornDuringCleanup");
      await remove(torn, true);
    }

    /** Deletes `branch` (with `force`, even while leases hold its versions). */
    async function remove(branch: BranchModel, force: boolean): Promise<void> {
      const before = branch.state;
      branch.state = "deleting";
      try {
        await deleteBranch(ctx, branch.name, {
          format: holdfastFormat,
          ownershipBoundMs: OWNERSHIP_BOUND_MS,
          ...(force ? { force } : {}),
        });
        branch.state = "deleted";
        world.note(`deleteBranch ${branch.name} ok`);
        world.bump("branchesDeleted");
      } catch (error) {
        world.tolerate(ctx, error, "branchDeleteFailed", `deleteBranch ${branch.name}`);
        if (isHoldfastError(error, "not-found")) branch.state = "deleted";
        else if (!isHoldfastError(error, "unresolved", "ambiguous")) branch.state = before;
      }
    }
  });
}
