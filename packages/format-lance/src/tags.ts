import { holdfastError } from "@holdfast/conditional-store";
import type { DatasetFormat } from "@holdfast/dataset";
import type { ProtocolContext } from "@holdfast/protocol";
import type {
  BranchDocument,
  Carried,
  ReferenceCodec,
  TagDocument,
} from "@holdfast/refs-lifecycle";
import { holdfastBranchName, lanceBranchName } from "./branch-names.js";
import { lanceManifestKey } from "./naming.js";
import {
  censusLanceReferences,
  LANCE_MAIN_BRANCH,
  LANCE_TREE_PREFIX,
  LanceBranchSchema,
  LanceTagSchema,
  parseLanceReference,
} from "./refs.js";

/**
 * Lance's tags and branches as holdfast's reference lifecycle sees them (docs/lance.md,
 * "Tags"). A tag holdfast writes is Lance's own JSON at `_refs/tags/{name}.json`
 * (`branch`, `version`, `createdAt`, `updatedAt`, `manifestSize`, `metadata`, as LanceDB
 * 0.31.0 writes it), so LanceDB lists it and checks it out; the admission intent and every
 * other lifecycle object stay under `_holdfast/refs/`. The generation that makes every
 * write's bytes unique (R9) is the tag's `updatedAt`. Branches are read-only: LanceDB
 * creates and deletes them.
 */
export const lanceReferenceCodec: ReferenceCodec = {
  validateTagName(name) {
    // Lance refuses these names when it reads a tag (its check_valid_tag).
    if (name.endsWith(".") || name.endsWith(".lock")) {
      throw holdfastError("invalid-input", "validate", `invalid Lance tag name ${name}`, {
        code: "INVALID_NAME",
        hint: "a Lance tag name does not end with '.' or '.lock'",
      });
    }
  },
  newGeneration: lanceGeneration,
  decode(kind, body, key) {
    if (kind === "tag") {
      const raw = parseLanceReference(LanceTagSchema, body, key);
      const doc: TagDocument & Carried = {
        schema: 1,
        name: nameOf(key),
        target: { branch: holdfastName(raw.branch), version: raw.version },
        ...(typeof raw.updatedAt === "string" ? { generation: raw.updatedAt } : {}),
        carried: raw,
      };
      return doc;
    }
    const raw = parseLanceReference(LanceBranchSchema, body, key);
    const doc: BranchDocument & Carried = {
      schema: 1,
      name: holdfastName(branchNameOf(key)),
      parent: { branch: holdfastName(raw.parentBranch), version: raw.parentVersion },
      metadata: {},
      carried: raw,
    };
    return doc;
  },
  encode(kind, doc, written) {
    if (kind !== "tag") {
      throw holdfastError("unsupported", "writeReference", "Lance branches are written by Lance");
    }
    return encodeLanceTag(doc as TagDocument & Carried, written.manifestSize);
  },
  writesBranches: false,
  census: censusLanceReferences,
  targetManifest: lanceTargetManifest,
};

// --- utils ---

/**
 * The manifest of a tag's target: on main at the key the table's naming gives; on a Lance
 * branch in `tree/{branch}/_versions/`, whose naming is the branch's own (LanceDB 0.31.0
 * names a branch's manifests V2 even on a V1 table), so both exact names of the version
 * are tried, V2 first, as Lance resolves a version. `null` when neither exists.
 */
async function lanceTargetManifest(
  ctx: ProtocolContext,
  format: DatasetFormat,
  target: { readonly branch: string; readonly version: number },
): Promise<{ key: string; size: number } | null> {
  const keys =
    target.branch === LANCE_MAIN_BRANCH
      ? [format.manifestKey(target.branch, target.version)]
      : (["v2", "v1"] as const).map(
          (naming) =>
            `${LANCE_TREE_PREFIX}${lanceName(target.branch)}/${lanceManifestKey(naming, target.version)}`,
        );
  for (const key of keys) {
    const meta = await ctx.store.head(key);
    if (meta) return { key, size: meta.size };
  }
  return null;
}

/**
 * The bytes of a Lance tag. Fields Lance added that holdfast does not model are kept
 * (`createdAt` of the tag's creation, `metadata`, anything newer); `manifestSize` is the
 * size of the target's manifest, which Lance uses to open it: taken from the existence
 * check of this write, or kept from the stored tag when the target did not change.
 */
function encodeLanceTag(doc: TagDocument & Carried, manifestSize: number | undefined): Uint8Array {
  const carried = doc.carried ?? {};
  const size =
    manifestSize ?? (carried.version === doc.target.version ? carried.manifestSize : undefined);
  if (typeof size !== "number" || doc.generation === undefined) {
    throw holdfastError(
      "invalid-input",
      "writeReference",
      `Lance tag ${doc.name}: the size of its manifest is unknown`,
      {
        code: "LANCE_TAG_INCOMPLETE",
        hint: "a Lance tag is written after its version's manifest is checked",
      },
    );
  }
  const tag = {
    ...carried,
    branch: doc.target.branch === LANCE_MAIN_BRANCH ? null : lanceName(doc.target.branch),
    version: doc.target.version,
    createdAt: typeof carried.createdAt === "string" ? carried.createdAt : doc.generation,
    updatedAt: doc.generation,
    manifestSize: size,
    metadata: carried.metadata ?? {},
  };
  return new TextEncoder().encode(JSON.stringify(tag, null, 2));
}

/**
 * A fresh `updatedAt`: the injected clock's millisecond, then six sub-millisecond digits
 * taken from the id source (Lance writes nanoseconds), so two writes of one tag within a
 * millisecond still differ in their bytes.
 */
function lanceGeneration(ctx: ProtocolContext): string {
  const iso = new Date(ctx.clock.now()).toISOString(); // 2026-12-01T00:24:08.666Z
  const id = ctx.ids.next();
  let spread = 0;
  for (const char of id) spread = (spread * 31 + char.charCodeAt(0)) % 1_000_000;
  return `${iso.slice(0, -1)}${spread.toString().padStart(6, "0")}Z`;
}

/** holdfast's name of the Lance branch in a tag or branch JSON (`null` is main). */
function holdfastName(lance: string | null | undefined): string {
  if (lance == null) return LANCE_MAIN_BRANCH;
  return holdfastBranchName(lance) ?? lance;
}

/** The Lance branch holdfast calls `branch` (`dev..sub` is `dev/sub`). */
function lanceName(branch: string): string {
  return lanceBranchName(branch) ?? branch;
}

/** The Lance name of a branch JSON: `_refs/branches/dev%2Fsub.json` is `dev/sub`. */
function branchNameOf(key: string): string {
  const file = nameOf(key);
  try {
    return decodeURIComponent(file);
  } catch {
    return file;
  }
}

function nameOf(key: string): string {
  const file = key.slice(key.lastIndexOf("/") + 1);
  return file.endsWith(".json") ? file.slice(0, -".json".length) : file;
}
