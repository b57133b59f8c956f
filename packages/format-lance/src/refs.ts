import { decodeJson, holdfastError, listAll } from "@holdfast/conditional-store";
import type { ProtocolContext } from "@holdfast/protocol";
import { INTENTS_PREFIX, scanIntentTargets } from "@holdfast/refs-lifecycle";
import type { ReferenceCensus } from "@holdfast/retirement";
import { z } from "zod";
import { holdfastBranchName } from "./branch-names.js";
import { LANCE_MALFORMED_REFERENCE, UnsupportedLanceDatasetError } from "./errors.js";
import { readLanceVersionHint } from "./hint.js";
import { LANCE_VERSIONS_PREFIX } from "./naming.js";

/** Lance's tags: `_refs/tags/{name}.json`. */
export const LANCE_TAGS_PREFIX = "_refs/tags/";
/** Lance's branches: `_refs/branches/{name}.json`. */
export const LANCE_BRANCHES_PREFIX = "_refs/branches/";
/** Every branch's own dataset: `tree/{name}/` (its `_versions/`, data, deletions). */
export const LANCE_TREE_PREFIX = "tree/";
/** holdfast's reference lifecycle state: tag intents are read; anything else is refused. */
const HOLDFAST_REFS_PREFIX = "_holdfast/refs/";
/** The name holdfast gives Lance's main branch (`branch: null` in Lance's JSON). */
export const LANCE_MAIN_BRANCH = "main";

const U64 = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);

/**
 * A Lance tag as LanceDB writes it (camelCase JSON): `branch` (null for main), `version`,
 * `manifestSize`, and newer fields (`createdAt`, `metadata`) that are kept but not needed.
 */
export const LanceTagSchema = z.looseObject({
  branch: z.string().nullable().optional(),
  version: U64,
  manifestSize: U64.optional(),
});
export type LanceTag = z.infer<typeof LanceTagSchema>;

/** A Lance branch: its fork point (`parentBranch`, null for main; `parentVersion`). */
export const LanceBranchSchema = z.looseObject({
  parentBranch: z.string().nullable().optional(),
  parentVersion: U64,
  createAt: U64.optional(),
  manifestSize: U64.optional(),
});
export type LanceBranch = z.infer<typeof LanceBranchSchema>;

/** One version a Lance reference needs. */
export interface LanceReference {
  /** `main` or the Lance branch name. */
  readonly branch: string;
  readonly version: number;
  readonly reason: "intent" | "tag" | "branch-lineage";
  /** The `_refs/` key (or holdfast intent key) that names it. */
  readonly source: string;
}

/**
 * Reads every Lance tag and branch and yields the versions they need: first the targets of
 * holdfast's admission intents (a tag `holdfast tag create|update|delete` is writing, read
 * before `_refs/` as in holdfast's own census), then a tag's version on its branch, and
 * each branch's fork point followed down to main (a branch of a branch shares its parent's
 * files from main, so main keeps the root fork point). Fails closed: an unreadable intent
 * or `_refs/` object, a `_refs/` object that is neither, a branch folder `tree/{name}/`
 * without its JSON, a parent branch that is gone, or holdfast lifecycle state other than
 * intents under `_holdfast/refs/` each throw. Invariants 2 and 8.
 */
export async function listLanceReferences(ctx: ProtocolContext): Promise<LanceReference[]> {
  for await (const meta of listAll(ctx.store, HOLDFAST_REFS_PREFIX)) {
    if (meta.key.startsWith(INTENTS_PREFIX)) continue;
    throw new UnsupportedLanceDatasetError(
      "holdfast-references",
      meta.key,
      `holdfast reference state ${meta.key} on a Lance dataset is not an intent of a tag`,
      "holdfast writes only tags on a Lance dataset; remove this object",
    );
  }
  const refs: LanceReference[] = [];
  await scanIntentTargets(ctx, (ref, source) => {
    refs.push({ branch: ref.branch, version: ref.version, reason: "intent", source });
  });
  const branches = new Map<string, LanceBranch & { source: string }>();
  for await (const meta of listAll(ctx.store, "_refs/")) {
    const tagName = nameUnder(meta.key, LANCE_TAGS_PREFIX);
    const branchName = nameUnder(meta.key, LANCE_BRANCHES_PREFIX);
    if (tagName !== null) {
      const tag = await readReference(ctx, meta.key, LanceTagSchema);
      refs.push({
        branch: tag.branch ?? LANCE_MAIN_BRANCH,
        version: tag.version,
        reason: "tag",
        source: meta.key,
      });
    } else if (branchName !== null) {
      const branch = await readReference(ctx, meta.key, LanceBranchSchema);
      branches.set(branchName, { ...branch, source: meta.key });
    } else {
      throw new UnsupportedLanceDatasetError(
        "foreign-reference",
        meta.key,
        `${meta.key} is under _refs/ but is neither a Lance tag nor a Lance branch`,
        "remove it or move it out of _refs/",
      );
    }
  }
  for (const [name, branch] of branches) {
    refs.push({
      branch: branch.parentBranch ?? LANCE_MAIN_BRANCH,
      version: branch.parentVersion,
      reason: "branch-lineage",
      source: branch.source,
    });
    const root = forkPointOnMain(name, branches);
    if (branch.parentBranch != null) {
      refs.push({ ...root, reason: "branch-lineage", source: branch.source });
    }
  }
  for (const folder of await listBranchFolders(ctx)) {
    if (!branches.has(folder)) {
      throw new UnsupportedLanceDatasetError(
        "zombie-branch",
        `${LANCE_TREE_PREFIX}${folder}/`,
        `Lance branch folder tree/${folder}/ has versions but no _refs/branches/${folder}.json`,
        "a branch creation may be in flight (retry later), or remove the leftover with Lance's force_delete_branch",
      );
    }
  }
  return refs;
}

/**
 * The ReferenceCensus for cleanup on a Lance dataset: for `(branch, versions)`, the versions
 * a Lance tag or branch needs, with the reason, and every version at or above the branch's
 * version hint (reason `version-hint`: Lance's readers probe upward from the hint and stop
 * at the first missing version, docs/lance.md "The version hint"). Re-reads `_refs/` and
 * the hint on every call (a tag published or a commit landed meanwhile counts); fails
 * closed (throws) on anything unreadable. Invariant 2.
 */
export function censusLanceReferences(ctx: ProtocolContext): ReferenceCensus {
  return async (branch, versions) => {
    const wanted = new Set(versions);
    const found = new Map<number, string>();
    for (const ref of await listLanceReferences(ctx)) {
      // `branch` is holdfast's name of the Lance branch (`dev..sub` for `dev/sub`).
      const on = ref.branch === LANCE_MAIN_BRANCH ? ref.branch : holdfastBranchName(ref.branch);
      if (on === branch && wanted.has(ref.version) && !found.has(ref.version)) {
        found.set(ref.version, ref.reason);
      }
    }
    const hint = await readLanceVersionHint(ctx, branch);
    if (hint !== null) {
      for (const version of versions) {
        if (version >= hint && !found.has(version)) found.set(version, "version-hint");
      }
    }
    return found;
  };
}

// --- utils ---

function nameUnder(key: string, prefix: string): string | null {
  if (!key.startsWith(prefix) || !key.endsWith(".json")) return null;
  const name = key.slice(prefix.length, -".json".length);
  return name.length > 0 && !name.includes("/") ? decodeURIComponentSafe(name) : null;
}

function decodeURIComponentSafe(name: string): string {
  try {
    return decodeURIComponent(name);
  } catch {
    return name;
  }
}

async function readReference<S extends z.ZodType>(
  ctx: ProtocolContext,
  key: string,
  schema: S,
): Promise<z.infer<S>> {
  const got = await ctx.store.get(key);
  const bad = (why: string) => malformedReference(key, why);
  // Listed a moment ago: a reference that vanished was deleted meanwhile; a later census
  // sees the state after the deletion. Fail closed rather than decide on a half view.
  if (!got) throw bad("it disappeared between listing and reading; retry");
  return parseLanceReference(schema, got.body, key);
}

/** Parses a Lance tag or branch JSON; anything else is `invalid-input` LANCE_MALFORMED_REFERENCE. */
export function parseLanceReference<S extends z.ZodType>(
  schema: S,
  body: Uint8Array,
  key: string,
): z.infer<S> {
  const bad = (why: string, cause?: unknown) => malformedReference(key, why, cause);
  let value: unknown;
  try {
    value = decodeJson(body);
  } catch (cause) {
    throw bad("not JSON", cause);
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw bad(parsed.error.message, parsed.error);
  return parsed.data;
}

function malformedReference(key: string, why: string, cause?: unknown) {
  return holdfastError(
    "invalid-input",
    "readReference",
    `Lance reference ${key} is unreadable: ${why}`,
    {
      key,
      code: LANCE_MALFORMED_REFERENCE,
      cause,
      hint: "cleanup stops rather than treat an unreadable reference as absent",
    },
  );
}

/** Follows a branch's parents down to main: main's version its files come from. */
function forkPointOnMain(
  name: string,
  branches: Map<string, LanceBranch & { source: string }>,
): { branch: string; version: number } {
  const seen = new Set<string>();
  let current = branches.get(name)!;
  while (current.parentBranch != null) {
    const parent = current.parentBranch;
    if (seen.has(parent)) {
      throw new UnsupportedLanceDatasetError(
        "foreign-reference",
        current.source,
        `Lance branches form a cycle through ${parent}`,
      );
    }
    seen.add(parent);
    const next = branches.get(parent);
    if (!next) {
      throw new UnsupportedLanceDatasetError(
        "zombie-branch",
        current.source,
        `Lance branch ${name} descends from branch ${parent}, whose _refs/branches/${parent}.json is gone`,
        "holdfast cannot tell which main version that branch's files come from",
      );
    }
    current = next;
  }
  return { branch: LANCE_MAIN_BRANCH, version: current.parentVersion };
}

/**
 * Branch names that have a `tree/{name}/_versions/` folder with at least one file directly
 * in it (a name may hold `/`: `tree/dev/sub/_versions/1.manifest` is `dev/sub`'s).
 */
async function listBranchFolders(ctx: ProtocolContext): Promise<Set<string>> {
  const names = new Set<string>();
  for await (const meta of listAll(ctx.store, LANCE_TREE_PREFIX)) {
    const rest = meta.key.slice(LANCE_TREE_PREFIX.length);
    const at = rest.lastIndexOf(`/${LANCE_VERSIONS_PREFIX}`);
    if (at > 0 && !rest.slice(at + 1 + LANCE_VERSIONS_PREFIX.length).includes("/")) {
      names.add(rest.slice(0, at));
    }
  }
  return names;
}
