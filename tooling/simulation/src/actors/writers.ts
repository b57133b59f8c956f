import type { ObjectStore } from "@holdfast/conditional-store";
import { type DataFile, latestVersion, tryReadManifest, writeDataFile } from "@holdfast/dataset";
import { HEADS_PREFIX } from "@holdfast/dataset/internal";
import { acquireLease, type Lease, releaseLease } from "@holdfast/leases";
import { holdfastFormat } from "@holdfast/refs-lifecycle";
import { BRANCH, ORPHAN_GRACE_MS } from "../config.js";
import type { SimulationWorld } from "../world.js";

/** Writers: each round commits one fresh data file on main. */
export function spawnWriters(world: SimulationWorld): void {
  const { config, sched } = world;
  world.spawnEach("writer", config.writers, async (ctx) => {
    for (let r = 0; r < config.rounds; r += 1) {
      await sched.sleep(sched.int(0, 3000));
      await world.commitOne(ctx);
    }
  });
}

/**
 * Hintless writers: like writers, through a view of the store without head hints (reads
 * find none, writes of one are dropped), as a holdfast from before hints commits: every
 * commit lists, and the other writers' hint lags behind the versions they add.
 */
export function spawnHintlessWriters(world: SimulationWorld): void {
  const { config, sched } = world;
  world.spawnEach(
    "hintless-writer",
    config.hintlessWriters ?? 0,
    async (ctx) => {
      for (let r = 0; r < config.rounds; r += 1) {
        await sched.sleep(sched.int(0, 3000));
        await world.commitOne(ctx);
      }
    },
    withoutHeadHints,
  );
}

function withoutHeadHints(store: ObjectStore): ObjectStore {
  const hint = (key: string) => key.startsWith(HEADS_PREFIX);
  return {
    backend: store.backend,
    location: store.location,
    capabilities: store.capabilities,
    get: (key, options) => (hint(key) ? Promise.resolve(null) : store.get(key, options)),
    head: (key, options) => (hint(key) ? Promise.resolve(null) : store.head(key, options)),
    put: (key, body, options) =>
      hint(key) ? Promise.resolve({ etag: "dropped" }) : store.put(key, body, options),
    delete: (key, options) => (hint(key) ? Promise.resolve() : store.delete(key, options)),
    deleteMany: (keys, options) => store.deleteMany(keys, options),
    list: (prefix, options) => store.list(prefix, options),
  };
}

/**
 * Restorers: each round commits an old main version's files again as the newest version
 * (a restore, a revert or an undeclared restore), half the time holding a lease on the
 * source across read and commit, dawdling between the two.
 */
export function spawnRestorers(world: SimulationWorld): void {
  const { config, sched } = world;
  world.spawnEach("restorer", config.restorers, async (ctx) => {
    for (let r = 0; r < config.rounds; r += 1) {
      await sched.sleep(sched.int(0, 3000));
      // Mostly a version just behind the newest (what a cleanup retires next); a revert
      // restores the newest version's parent.
      const top = world.latestMain();
      const roll = sched.random();
      const kind = roll < 0.2 ? "revert" : roll < 0.35 ? "undeclared" : "restore";
      const version =
        kind === "revert"
          ? Math.max(1, top - 1)
          : sched.random() < 0.8
            ? world.retirableSoon()
            : sched.int(1, top);
      const source = { branch: BRANCH, version };
      // Half the time the writer holds a lease on the source across its read and commit.
      let lease: Lease | undefined;
      if (sched.random() < 0.5) {
        try {
          lease = await acquireLease(ctx, { format: holdfastFormat, ...source, ttlMs: 60_000 });
        } catch (error) {
          world.tolerate(ctx, error);
          world.bump("restoreLeaseRefused");
          continue;
        }
      }
      try {
        const files = await world.readSource(ctx, source.version);
        if (!files) {
          world.bump("restoreSourceGone");
          continue;
        }
        await world.dawdle();
        // A restore or revert: the old version's files committed again as the newest
        // version, naming its source (or, "undeclared", not naming it).
        await world.commitReusing(ctx, kind, {
          branch: BRANCH,
          ...world.reuse(files, kind === "undeclared" ? [] : [source]),
        });
      } catch (error) {
        world.tolerate(ctx, error);
        world.bump("restoreReadFailed");
      } finally {
        if (lease) await releaseLease(ctx, lease).catch(() => {});
      }
    }
  });
}

/**
 * Forkers: each round writes a branch as a manifest only (version 1 names a main version's
 * files and that version as parent), sometimes followed by a fresh commit on it.
 */
export function spawnForkers(world: SimulationWorld): void {
  const { config, sched } = world;
  world.spawnEach("forker", config.forkers, async (ctx, w) => {
    for (let r = 0; r < config.rounds; r += 1) {
      await sched.sleep(sched.int(0, 3000));
      const source = { branch: BRANCH, version: sched.int(1, world.latestMain()) };
      let files: DataFile[] | null;
      try {
        files = await world.readSource(ctx, source.version);
      } catch (error) {
        world.tolerate(ctx, error);
        continue;
      }
      if (!files) continue;
      await world.dawdle();
      // A fork written as a manifest only: version 1 of a new branch names the source
      // as parent and its files, with no reference file.
      const branch = `f${config.seed}-${w}-${r}`;
      if (
        (await world.commitReusing(ctx, "fork", {
          branch,
          parent: source,
          ...world.reuse(files, [source]),
        })) &&
        sched.random() < 0.5
      ) {
        await world.commitOne(ctx, branch);
      }
    }
  });
}

/**
 * Bulk writers: each round writes 5–30 files and commits them, sometimes after stalling
 * past the fresh window or past the orphan grace (the commit must then refuse).
 */
export function spawnBulkWriters(world: SimulationWorld): void {
  const { config, sched } = world;
  world.spawnEach("bulk-writer", config.bulkWriters, async (ctx) => {
    for (let r = 0; r < Math.max(1, Math.floor(config.rounds / 3)); r += 1) {
      await sched.sleep(sched.int(0, 3000));
      const files = [];
      try {
        for (let f = sched.int(5, 30); f > 0; f -= 1) {
          files.push(await writeDataFile(ctx, new TextEncoder().encode(`bulk-${f}`)));
          await sched.sleep(sched.int(0, 200));
        }
      } catch (error) {
        world.tolerate(ctx, error);
        continue;
      }
      // Sometimes the writer stalls past the fresh window, or past the orphan grace
      // (cleaners may sweep the files meanwhile: the commit must then refuse).
      if (sched.random() < 0.3) {
        await sched.sleep(sched.pick([20 * 60_000, ORPHAN_GRACE_MS + 10 * 60_000]));
      }
      await world.commitReusing(ctx, "bulk", { branch: BRANCH, files });
    }
  });
}

/**
 * Appenders: each round reads the newest main version's manifest, dawdles, writes one new
 * file and commits the newest's files plus the new one, naming no sources (an append:
 * docs/protocol.md §2.5, rule H). The reused files count as read
 * from the version the commit builds on, so a cleanup in its delete phase must not refuse
 * it (unless the newest moved on meanwhile) and must never delete what it names.
 */
export function spawnAppenders(world: SimulationWorld): void {
  const { config, sched } = world;
  world.spawnEach("appender", config.appenders ?? 0, async (ctx) => {
    for (let r = 0; r < config.rounds; r += 1) {
      await sched.sleep(sched.int(0, 3000));
      let files: DataFile[];
      try {
        const top = await latestVersion(ctx, BRANCH);
        const head = top === null ? null : await tryReadManifest(ctx, BRANCH, top);
        if (!head) continue;
        // Copies, as a writer that read the manifest has them: reused, not fresh.
        files = head.manifest.files.map((f) => ({ key: f.key, size: f.size }));
        await world.dawdle();
        files.push(await writeDataFile(ctx, new TextEncoder().encode(`append-${ctx.ids.next()}`)));
      } catch (error) {
        world.tolerate(ctx, error, "appendReadFailed");
        continue;
      }
      await world.commitReusing(ctx, "append", { branch: BRANCH, ...world.reuse(files, []) });
    }
  });
}
