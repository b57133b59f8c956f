import { decodeJson, holdfastError } from "@holdfast/conditional-store";
import { RETIREMENT_ROOT, RetirementState } from "@holdfast/protocol";
import { z } from "zod";

/**
 * Default ownership bound: one minute of storage time after the record's last write. A
 * live owner renews its record every third of the bound (heartbeat), so only a crashed
 * owner's record goes stale, and it blocks acquisitions for about a minute at most.
 */
export const DEFAULT_OWNERSHIP_BOUND_MS = 60 * 1000;

/** One version named by a retirement record, with the manifest identity it was drained at. */
export const RetiringVersion = z.object({
  version: z.number().int().min(1),
  manifestEtag: z.string().min(1),
  cancelled: z.boolean(),
  reason: z.string().optional(),
});
export type RetiringVersion = z.infer<typeof RetiringVersion>;

/**
 * The persisted retirement record, schema 1: one per cleanup operation and branch.
 * `writerId` is fresh on every write so a fencing rewrite always changes the bytes (and
 * so the content-MD5 ETag on S3/RGW); unknown fields are ignored on read.
 */
export const RetirementRecord = z.object({
  schema: z.literal(1),
  opId: z.string().min(1),
  writerId: z.string().min(1),
  owner: z.string().min(1),
  branch: z.string().min(1),
  state: RetirementState,
  ownershipBoundMs: z.number().int().positive(),
  versions: z.array(RetiringVersion).min(1),
  /**
   * Set (once, committed → committed) before the first file of the record is deleted: the
   * storage time of the run that started the deletion. From then on a version whose
   * manifest key holds another object is never cancelled (docs/protocol.md §5.5).
   */
  deletionStartedAt: z.string().min(1).optional(),
});
export type RetirementRecord = z.infer<typeof RetirementRecord>;

const VERSION_DIGITS = 20;
const KEY_TAIL = /^(\d{20})-(\d{20})-([0-9A-Za-z]+)\.json$/;

/** Listing prefix of one branch's retirement records. */
export function retirementPrefix(branch: string): string {
  return `${RETIREMENT_ROOT}${branch}/`;
}

/**
 * Key of a record: branch and version range in the key, so an acquirer finds the records
 * that can cover its version with one LIST and reads only those (docs/protocol.md §5).
 */
export function retirementKey(
  branch: string,
  minVersion: number,
  maxVersion: number,
  opId: string,
): string {
  if (!/^[0-9A-Za-z]+$/.test(opId)) {
    throw holdfastError("invalid-input", "validate", `invalid retirement op id ${opId}`);
  }
  for (const v of [minVersion, maxVersion]) {
    if (!Number.isSafeInteger(v) || v < 1) {
      throw holdfastError("invalid-input", "validate", `invalid version ${v}`);
    }
  }
  if (minVersion > maxVersion) {
    throw holdfastError(
      "invalid-input",
      "validate",
      `empty version range ${minVersion}-${maxVersion}`,
    );
  }
  return `${retirementPrefix(branch)}${pad(minVersion)}-${pad(maxVersion)}-${opId}.json`;
}

/** What a record key says: branch, version range, operation id. `null` for a foreign key. */
export interface RetirementKeyParts {
  readonly branch: string;
  readonly minVersion: number;
  readonly maxVersion: number;
  readonly opId: string;
}

/** Parses a record key; returns `null` for keys that are not retirement records. */
export function parseRetirementKey(key: string): RetirementKeyParts | null {
  if (!key.startsWith(RETIREMENT_ROOT)) return null;
  const rest = key.slice(RETIREMENT_ROOT.length);
  const slash = rest.indexOf("/");
  if (slash <= 0) return null;
  const branch = rest.slice(0, slash);
  const match = KEY_TAIL.exec(rest.slice(slash + 1));
  if (!match) return null;
  const minVersion = Number(match[1]);
  const maxVersion = Number(match[2]);
  if (!Number.isSafeInteger(minVersion) || !Number.isSafeInteger(maxVersion)) return null;
  return { branch, minVersion, maxVersion, opId: match[3]! };
}

/** Parses record bytes (already JSON-decoded); a record we cannot read is an error, never "no record". */
export function parseRetirementRecord(value: unknown, key: string): RetirementRecord {
  const parsed = RetirementRecord.safeParse(value);
  if (!parsed.success) {
    throw holdfastError("unsupported", "get", `unreadable retirement record ${key}`, {
      key,
      hint: "written by a newer holdfast or corrupted; retirement fails closed until it is resolved",
      cause: parsed.error,
    });
  }
  return parsed.data;
}

/**
 * Decodes and parses stored record bytes. Bytes that are not JSON (truncated, empty,
 * binary) are `invalid-input` with code `MALFORMED_OBJECT`, naming the key and carrying
 * the parse error as `cause`; JSON of another schema is `unsupported` (see
 * {@link parseRetirementRecord}). Either way the caller fails closed.
 */
export function decodeRetirementRecord(body: Uint8Array, key: string): RetirementRecord {
  let value: unknown;
  try {
    value = decodeJson(body);
  } catch (cause) {
    throw holdfastError("invalid-input", "get", `retirement record ${key} is not JSON`, {
      key,
      code: "MALFORMED_OBJECT",
      hint: "corrupted or not written by holdfast; retirement fails closed until it is removed (docs/operations.md)",
      cause,
    });
  }
  return parseRetirementRecord(value, key);
}

function pad(n: number): string {
  return n.toString().padStart(VERSION_DIGITS, "0");
}
