import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { type FileHandle, open, readFile, rename, writeFile } from "node:fs/promises";
import { holdfastError } from "@holdfast/conditional-store";
import { z } from "zod";

/**
 * Roles, each a superset of the one before: a reader reads and leases; a writer also
 * creates, moves and deletes tags and branches; an admin also runs cleanup and recovery.
 */
export const ROLES = ["reader", "writer", "admin"] as const;
export type Role = (typeof ROLES)[number];

/** One entry of the tokens file. Only the SHA-256 of a token is stored, never the token. */
export const TokenEntrySchema = z.strictObject({
  name: z
    .string()
    .min(1)
    .max(64)
    .regex(/^[A-Za-z0-9_.-]+$/, "letters, digits, . _ -"),
  role: z.enum(ROLES),
  sha256: z.string().regex(/^[0-9a-f]{64}$/, "64 lowercase hex digits"),
});
export type TokenEntry = z.infer<typeof TokenEntrySchema>;

/** The tokens file: `[{ "name", "role", "sha256" }]`, names unique. */
export const TokensFileSchema = z
  .array(TokenEntrySchema)
  .refine((list) => new Set(list.map((t) => t.name)).size === list.length, "token names repeat");

/** True when `held` may call a route that needs `needed`. */
export function roleAllows(held: Role, needed: Role): boolean {
  return ROLES.indexOf(held) >= ROLES.indexOf(needed);
}

/** SHA-256 of a token, lowercase hex: what the tokens file stores. */
export function hashToken(token: string): string {
  return createHash("sha256").update(token, "utf8").digest("hex");
}

/**
 * Finds the entry a presented token belongs to. Every entry is compared, each in constant
 * time (`timingSafeEqual` over the digests), so the time taken tells nothing about which
 * entry matched or how much of a digest did.
 */
export function matchToken(entries: readonly TokenEntry[], token: string): TokenEntry | null {
  const presented = Buffer.from(hashToken(token), "hex");
  let found: TokenEntry | null = null;
  for (const entry of entries) {
    const stored = Buffer.from(entry.sha256, "hex");
    if (stored.length === presented.length && timingSafeEqual(stored, presented)) found ??= entry;
  }
  return found;
}

/**
 * Reads and validates a tokens file; a malformed file is `invalid-input`, never half-used.
 * A file that its group or others may write is refused (`TOKENS_FILE_WRITABLE`): whoever can
 * write it can add an admin token. The mode is read from the same open file that is read.
 */
export async function loadTokens(path: string): Promise<TokenEntry[]> {
  let handle: FileHandle;
  try {
    handle = await open(path, "r");
  } catch (error) {
    throw holdfastError("invalid-input", "parse", `cannot read tokens file ${path}`, {
      hint: "create one with: holdfast token create --role reader --name <name> --tokens FILE",
      cause: error,
    });
  }
  try {
    refuseWritableByOthers(path, (await handle.stat()).mode);
    return parseTokens(await handle.readFile("utf8"), path);
  } finally {
    await handle.close();
  }
}

/** Error code of a tokens file its group or others may write. */
export const TOKENS_FILE_WRITABLE = "TOKENS_FILE_WRITABLE";

/** Parses the text of a tokens file. */
export function parseTokens(raw: string, path = "tokens file"): TokenEntry[] {
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch (error) {
    throw holdfastError("invalid-input", "parse", `${path} is not JSON`, { cause: error });
  }
  const parsed = TokensFileSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw holdfastError(
      "invalid-input",
      "parse",
      `${path}: ${issue?.path.join(".") || "file"}: ${issue?.message ?? "invalid"}`,
      { hint: 'expected [{ "name": "etl", "role": "reader", "sha256": "<64 hex>" }]' },
    );
  }
  return parsed.data;
}

/**
 * Creates a token for `name` with `role`, adds its hash to the tokens file (creating the
 * file if missing) and returns the token: the only time it is ever shown. The file is
 * replaced by a rename, so a reader never sees half of it.
 */
export async function createToken(
  path: string,
  options: { name: string; role: Role },
  random: (size: number) => Buffer = randomBytes,
): Promise<{ token: string; entry: TokenEntry }> {
  const existing = await readFile(path, "utf8").then(
    (raw) => parseTokens(raw, path),
    (error: NodeJS.ErrnoException) => {
      if (error.code === "ENOENT") return [] as TokenEntry[];
      throw error;
    },
  );
  const candidate = TokenEntrySchema.pick({ name: true, role: true }).safeParse(options);
  if (!candidate.success) {
    throw holdfastError(
      "invalid-input",
      "parse",
      `invalid token ${candidate.error.issues[0]?.path.join(".")}: ${candidate.error.issues[0]?.message}`,
    );
  }
  if (existing.some((t) => t.name === options.name)) {
    throw holdfastError("conflict", "parse", `a token named ${options.name} exists in ${path}`, {
      hint: "pick another name, or remove the old entry from the file first",
    });
  }
  const token = `hf_${random(32).toString("base64url")}`;
  const entry: TokenEntry = { name: options.name, role: options.role, sha256: hashToken(token) };
  await replaceTokensFile(path, [...existing, entry]);
  return { token, entry };
}

/**
 * Removes the entry with this SHA-256 from the tokens file (replaced by a rename, mode
 * 0600); returns false when no entry has it. A running server does not re-read the file:
 * revoke the token on the store too (`revokeToken`), which every replica sees.
 */
export async function removeToken(path: string, sha256: string): Promise<boolean> {
  const existing = await loadTokens(path);
  const kept = existing.filter((t) => t.sha256 !== sha256);
  if (kept.length === existing.length) return false;
  await replaceTokensFile(path, kept);
  return true;
}

// --- utils ---

async function replaceTokensFile(path: string, entries: readonly TokenEntry[]): Promise<void> {
  const temp = `${path}.${process.pid}.tmp`;
  await writeFile(temp, `${JSON.stringify(entries, null, 2)}\n`, { mode: 0o600 });
  await rename(temp, path);
}

function refuseWritableByOthers(path: string, mode: number): void {
  // Windows has no group/other mode bits; its ACLs are the operator's to set.
  if (process.platform === "win32" || (mode & 0o022) === 0) return;
  const who = [(mode & 0o020) !== 0 ? "its group" : "", (mode & 0o002) !== 0 ? "everyone" : ""]
    .filter(Boolean)
    .join(" and ");
  throw holdfastError(
    "invalid-input",
    "parse",
    `tokens file ${path} is writable by ${who} (mode ${(mode & 0o777).toString(8).padStart(4, "0")}): whoever can write it can add an admin token`,
    {
      code: TOKENS_FILE_WRITABLE,
      hint: `chmod 600 ${path} (holdfast token create writes it with mode 0600)`,
    },
  );
}
