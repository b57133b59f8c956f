import { decodeJson, holdfastError } from "@holdfast/conditional-store";
import type { ProtocolContext } from "@holdfast/protocol";
import { z } from "zod";
import { lanceBranchName } from "./branch-names.js";
import { LANCE_VERSIONS_PREFIX } from "./naming.js";

/** Lance's version hint: `{"version": N}`, in a branch's `_versions/`. */
export const LANCE_VERSION_HINT = "latest_version_hint.json";
/** Code of a version hint that does not parse. */
export const LANCE_MALFORMED_HINT = "LANCE_MALFORMED_HINT";
/** The name holdfast gives Lance's main branch. */
const MAIN = "main";
const TREE = "tree/";

const VersionHintSchema = z.looseObject({
  version: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
});

/**
 * The key of a branch's version hint: `_versions/latest_version_hint.json`, or under
 * `tree/{lance name}/` for the branch holdfast calls `branch` (`dev..sub`: `tree/dev/sub/`).
 */
export function lanceVersionHintKey(branch: string): string {
  const root = branch === MAIN ? "" : `${TREE}${lanceBranchName(branch) ?? branch}/`;
  return `${root}${LANCE_VERSIONS_PREFIX}${LANCE_VERSION_HINT}`;
}

/**
 * The version a branch's hint names, or `null` when there is no hint. Lance writes the hint
 * after its commits on stores whose listings are not ordered (local disk), and its readers
 * read it and probe upward, version by version, stopping at the first one missing: a version
 * deleted at or above the hint would make the table read as the older state below the gap.
 * So a cleanup keeps every version at or above it (docs/lance.md, "The version hint"). A
 * hint that does not parse is `invalid-input` (LANCE_MALFORMED_HINT): the census stops
 * rather than guess where readers start.
 */
export async function readLanceVersionHint(
  ctx: ProtocolContext,
  branch: string,
): Promise<number | null> {
  const key = lanceVersionHintKey(branch);
  const got = await ctx.store.get(key);
  if (!got) return null;
  let value: unknown;
  try {
    value = decodeJson(got.body);
  } catch (cause) {
    throw malformed(key, "not JSON", cause);
  }
  const parsed = VersionHintSchema.safeParse(value);
  if (!parsed.success) throw malformed(key, parsed.error.message, parsed.error);
  return parsed.data.version;
}

// --- utils ---

function malformed(key: string, why: string, cause: unknown) {
  return holdfastError(
    "invalid-input",
    "readVersionHint",
    `Lance version hint ${key} is unreadable: ${why}`,
    {
      key,
      code: LANCE_MALFORMED_HINT,
      cause,
      hint: "Lance rewrites the hint on its next commit; or remove the file (readers then list _versions/)",
    },
  );
}
