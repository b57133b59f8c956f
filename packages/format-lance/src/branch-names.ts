import { validateName } from "@holdfast/protocol";
import { UnsupportedLanceDatasetError } from "./errors.js";

/**
 * holdfast's names for Lance branches (docs/lance.md, "Lance branches"). A holdfast branch
 * name is one key segment (`[A-Za-z0-9._-]`, docs/guarantees.md invariant 6); Lance allows
 * `/` between segments (`dev/sub` lives in `tree/dev/sub/`). Lance never allows `..` in a
 * branch name, so holdfast writes a Lance `/` as `..`: `dev/sub` is holdfast's `dev..sub`
 * (in leases, retirement records, stats and the CLI), and a name that is already a holdfast
 * name is itself. The mapping is exact both ways on every name it accepts: each segment
 * starts and ends with a character other than `.` (so `...` never appears), the first does
 * not start with `-`, and the result is at most 128 characters. A Lance name outside that
 * (a segment like `.x` or `x.`, a non-ASCII letter, a longer name) has no holdfast name:
 * its versions are not retired and the orphan sweep leaves its folder alone.
 */

/** Main's name in holdfast (Lance's `branch: null`; Lance refuses a branch named `main`). */
const MAIN = "main";
/** One segment of a nested Lance name that maps exactly: no `.` at either end. */
const PLAIN_SEGMENT = /^[A-Za-z0-9_-](?:[A-Za-z0-9._-]*[A-Za-z0-9_-])?$/;
/**
 * Folders Lance keeps inside a branch root (and the table root): a later segment with one of
 * these names would put the nested branch's root inside its parent's own folders.
 */
const ROOT_FOLDERS = new Set([
  "_versions",
  "data",
  "_deletions",
  "_indices",
  "_transactions",
  "_refs",
  "tree",
  "_holdfast",
  "_mem_wal",
  "_blobs",
  "_fri",
]);

/** holdfast's name for the Lance branch `lance`, or `null` when it has none. */
export function holdfastBranchName(lance: string): string | null {
  if (!lance.includes("/")) return isValidName(lance) && !lance.includes("..") ? lance : null;
  const segments = lance.split("/");
  if (!segments.every((s) => PLAIN_SEGMENT.test(s)) || segments[0]!.startsWith("-")) return null;
  const name = segments.join("..");
  return isValidName(name) ? name : null;
}

/** The Lance branch holdfast calls `name` (`main` for main), or `null` when none maps to it. */
export function lanceBranchName(name: string): string | null {
  if (name === MAIN) return MAIN;
  if (!isValidName(name)) return null;
  if (!name.includes("..")) return name;
  const lance = name.split("..").join("/");
  return holdfastBranchName(lance) === name ? lance : null;
}

/**
 * Refuses (UnsupportedLanceDatasetError `branch-layout`) a Lance branch whose root would lie
 * inside another root's own folders: a segment after the first named like a folder Lance
 * keeps in a root (`a/data` lives in `tree/a/data/`, which is branch `a`'s data folder), so
 * neither branch's files could be told from the other's.
 */
export function checkBranchLayout(lance: string, key: string): void {
  const nested = lance.split("/").slice(1);
  const clash = nested.find((segment) => ROOT_FOLDERS.has(segment));
  if (clash === undefined) return;
  throw new UnsupportedLanceDatasetError(
    "branch-layout",
    key,
    `Lance branch ${JSON.stringify(lance)} lives in tree/${lance}/, inside the ${clash}/ folder of tree/${lance.slice(0, lance.lastIndexOf(`/${clash}`))}/: its files and that root's could not be told apart`,
    "rename the branch with Lance (a segment after the first other than a Lance folder name), or clean this table with Lance's own tools",
  );
}

// --- utils ---

/** A holdfast branch name (validateName): one segment of `[A-Za-z0-9._-]`, 1..128 characters. */
function isValidName(name: string): boolean {
  try {
    validateName(name, "branch");
    return true;
  } catch {
    return false;
  }
}
