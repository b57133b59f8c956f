import { decodeJson, holdfastError, listAll } from "@holdfast/conditional-store";
import {
  COMMIT_INTENT_PREFIX,
  CommitIntentSchema,
  type FormatManifest,
  precisionIntervalMs,
  truncSec,
} from "@holdfast/dataset";
import { parseRetirementKey } from "@holdfast/retirement";
import type { Plan } from "./plan.js";
import { VersionSet } from "./ranges.js";
import type { RunState } from "./run-state.js";

/** What the last look before deletion found. */
export interface LateCommits {
  /** Intents past their bound: a crashed writer's leftovers, removed by the sweep. */
  readonly expiredIntents: string[];
  /**
   * Versions whose manifest the last look listed, per branch: after every commit and
   * before any deletion, so a version of a committed record missing here had its manifest
   * deleted by an earlier run (which deletes a version's data files before its manifest).
   * The deletion reads nothing more of it. `undefined` when the last look did not run.
   */
  readonly present?: ReadonlyMap<string, VersionSet> | undefined;
}

/**
 * Step 5a, the last look before any deletion, AFTER every retirement of this run is
 * committed (docs/protocol.md, "Commits that reuse files"): R(commit intents), then
 * R(manifests added since the plan, on every branch, new branches included). Every data
 * file a live intent or such a manifest names joins the retained set, so neither the
 * retirement deletions nor the orphan sweep can remove a file a commit in flight (or
 * just landed) names. Intents are read first: an intent is removed only after its
 * manifest landed, so whatever the order of events, one of the two reads sees it.
 */
export async function protectLateCommits(state: RunState, plan: Plan): Promise<LateCommits> {
  const { ctx, format, now } = state;
  const expiredIntents: string[] = [];
  const look = state.stats.lastLook;
  const keep = (key: string) => {
    if (plan.retainedFiles.has(key)) return;
    plan.retainedFiles.add(key);
    look.filesKept += 1;
  };
  // 1. Commit intents (fail-closed: an unreadable intent stops the run).
  for await (const meta of listAll(ctx.store, COMMIT_INTENT_PREFIX)) {
    const got = await ctx.store.get(meta.key);
    if (!got) continue; // removed since the listing: its manifest landed (read below) or it failed
    let intent: ReturnType<typeof CommitIntentSchema.parse>;
    try {
      intent = CommitIntentSchema.parse(decodeJson(got.body));
    } catch (cause) {
      throw holdfastError("invalid-input", "cleanup", `commit intent ${meta.key} is unreadable`, {
        key: meta.key,
        code: "MALFORMED_OBJECT",
        cause,
        hint: "inspect the object; cleanup deletes nothing while it cannot read every intent",
      });
    }
    const expiresAt =
      truncSec(got.lastModified) +
      intent.boundMs +
      precisionIntervalMs(ctx.store.capabilities.timestampPrecisionMs);
    // `now` was probed at the start of the run: judging expiry by it keeps more alive.
    if (truncSec(now) > expiresAt) {
      expiredIntents.push(meta.key);
      continue;
    }
    look.intents += 1;
    for (const file of intent.files) keep(file);
  }
  // 2. Manifests added since the plan, on every branch (new branches included), and
  // manifests this run's records retire whose key now holds another object (ETag): the
  // deletion reads them as replaced and keeps them (docs/protocol.md, Cleanup
  // "Refuse before the commit"). The listing is the one the last look makes anyway.
  const retiring = retiringByKey(state);
  const present = new Map<string, VersionSet>();
  for (const branch of await format.listBranches(ctx)) {
    const seen = plan.listed.get(branch);
    const listed = new VersionSet();
    present.set(branch, listed);
    for await (const entry of format.listVersions(ctx, branch)) {
      listed.add(entry.version);
      const own = retiring.get(entry.key);
      if (own && own.manifest.etag !== entry.etag) {
        // Replaced since the read before the drain: kept, never retired (reason `changed`).
        state.stats.retained.push({ branch, version: entry.version, reason: "changed" });
        await state.pool.run(async () => {
          const manifest = await format.readManifest(ctx, branch, entry.version);
          own.manifests.set(entry.version, manifest);
          for (const file of manifest?.files ?? []) keep(file.key);
        });
        continue;
      }
      if (seen?.has(entry.version)) continue;
      await state.pool.run(async () => {
        const manifest = await format.readManifest(ctx, branch, entry.version);
        if (manifest) look.lateManifests += 1;
        for (const file of manifest?.files ?? []) keep(file.key);
      });
    }
  }
  await state.pool.drain();
  return { expiredIntents, present };
}

/** The manifests this run's committed records retire (read before their commit), by manifest key. */
function retiringByKey(state: RunState) {
  const byKey = new Map<
    string,
    { manifest: FormatManifest; manifests: Map<number, FormatManifest | null> }
  >();
  for (const [recordKey, manifests] of state.retiredManifests) {
    const branch = parseRetirementKey(recordKey)?.branch;
    if (branch === undefined) continue;
    for (const [version, manifest] of manifests) {
      if (manifest) byKey.set(state.format.manifestKey(branch, version), { manifest, manifests });
    }
  }
  return byKey;
}
