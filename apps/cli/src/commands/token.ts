import { type FileHandle, open, rm } from "node:fs/promises";
import { resolve } from "node:path";
import { holdfastError } from "@holdfast/conditional-store";
import { createContext } from "@holdfast/protocol";
import {
  createToken,
  loadTokens,
  ROLES,
  type Role,
  removeToken,
  revokeToken,
} from "@holdfast/server";
import { Command } from "commander";
import { ExitCode } from "../exit-codes.js";
import { type CommandContext, type Registrar, withStoreOptions } from "../program.js";

import { openSources, tokensFile } from "./serve.js";

/** `token create|revoke`: bearer tokens of `holdfast serve`. */
export function registerToken(r: Registrar, program: Command): void {
  const token = new Command("token").description("bearer tokens of holdfast serve");
  token.addCommand(
    r.leaf(
      new Command("create")
        .description("create a token, add its hash to the tokens file, and print the token once")
        .requiredOption("--role <role>", `one of ${ROLES.join(", ")}`)
        .requiredOption("--name <name>", "who or what uses it, e.g. etl")
        .option("--tokens <file>", "tokens file (env HOLDFAST_TOKENS_FILE; created when missing)")
        .option(
          "--out <file>",
          "write the token to this new file, mode 600 (readable by you only), instead of stdout; shell redirection (> file) creates a file others may read",
        ),
      "token create",
      [
        "holdfast token create --role reader --name etl --tokens tokens.json",
        "holdfast token create --role reader --name prometheus --tokens tokens.json --out prometheus.token",
      ],
      tokenCreate,
    ),
  );
  token.addCommand(
    r.leaf(
      withStoreOptions(
        new Command("revoke")
          .description(
            "revoke a token on the served datasets' stores: every running replica refuses it within 10 s, no restart needed",
          )
          .argument("<url>", "the storage URL given to holdfast serve")
          .option(
            "--dataset <name...>",
            "the datasets served under <url>, as given to holdfast serve",
          )
          .option("--name <name>", "the token's name in the tokens file")
          .option(
            "--sha256 <hex>",
            "the token's SHA-256 (its tokens-file entry), when this host has no tokens file",
          )
          .option(
            "--tokens <file>",
            "tokens file (env HOLDFAST_TOKENS_FILE): finds the entry by --name and removes it",
          )
          .addHelpText(
            "after",
            "\nThe revocation is a record on each dataset's store (_holdfast/server/revoked-tokens/), so\n" +
              "replicas on every host see it: each re-reads the list at most every 10 s. The entry is also\n" +
              "removed from --tokens, so a restart with that file does not need the record.",
          ),
      ),
      "token revoke",
      [
        "holdfast token revoke ./ds --name etl --tokens tokens.json",
        "holdfast token revoke s3://bucket/datasets --dataset events clicks --sha256 <64 hex> --name etl",
      ],
      tokenRevoke,
    ),
  );
  program.addCommand(token);
}

/** Creates `path` for the token: create-only (an existing file is refused), mode 600. */
async function createPrivateFile(path: string): Promise<FileHandle> {
  try {
    const handle = await open(path, "wx", 0o600);
    // The process umask can only clear bits; set exactly 600 whatever it is.
    await handle.chmod(0o600);
    return handle;
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    throw holdfastError(
      code === "EEXIST" ? "conflict" : "invalid-input",
      "token create",
      code === "EEXIST" ? `${path} already exists` : `cannot create ${path}: ${String(code)}`,
      {
        key: path,
        code: code === "EEXIST" ? "TOKEN_FILE_EXISTS" : "TOKEN_FILE_UNWRITABLE",
        hint: "give --out a new file: the token is written create-only, never over another file",
        cause: error,
      },
    );
  }
}

/** `holdfast token create`. */
async function tokenCreate(
  _args: readonly string[],
  opts: Record<string, unknown>,
  cx: CommandContext,
): Promise<number> {
  const file = tokensFile(opts, cx.io);
  if (file === undefined) {
    throw holdfastError("invalid-input", "parse", "token create needs --tokens FILE", {
      hint: "or set HOLDFAST_TOKENS_FILE",
    });
  }
  const role = String(opts.role);
  if (!(ROLES as readonly string[]).includes(role)) {
    throw holdfastError("invalid-input", "parse", `--role must be one of ${ROLES.join(", ")}`);
  }
  // The token's file first, create-only with mode 600 (before the tokens file learns its
  // hash): an existing file is refused and nothing is written.
  const out = typeof opts.out === "string" ? resolve(cx.io.cwd, opts.out) : undefined;
  const handle = out === undefined ? undefined : await createPrivateFile(out);
  let created: Awaited<ReturnType<typeof createToken>>;
  try {
    created = await createToken(file, { name: String(opts.name), role: role as Role });
    if (handle) await handle.writeFile(`${created.token}\n`);
  } catch (error) {
    if (handle && out) {
      await handle.close();
      await rm(out, { force: true });
    }
    throw error;
  }
  await handle?.close();
  const { token: secret, entry } = created;
  cx.out.result(cx.command, {
    name: entry.name,
    role: entry.role,
    ...(out === undefined ? { token: secret } : { tokenFile: out }),
    tokensFile: file,
  });
  if (out === undefined) {
    cx.out.line(secret);
    cx.out.note(`Added ${entry.name} (${entry.role}) to ${file}. The token is shown only now.`);
  } else {
    cx.out.line(
      `Added ${entry.name} (${entry.role}) to ${file}; the token is in ${out} (mode 600).`,
    );
  }
  return ExitCode.ok;
}

/** `holdfast token revoke`. */
async function tokenRevoke(
  [url]: readonly string[],
  opts: Record<string, unknown>,
  cx: CommandContext,
): Promise<number> {
  const file = tokensFile(opts, cx.io);
  const entry = await tokenToRevoke(opts, file);
  const sources = await openSources(url!, opts, cx.io);
  const revokedOn: { dataset: string; key: string; alreadyRevoked: boolean }[] = [];
  for (const source of sources) {
    const done = await revokeToken(createContext(source.store), entry);
    revokedOn.push({ dataset: source.name, ...done });
  }
  // After every store has the record: the file is the fallback, not the revocation.
  const removed = file === undefined ? false : await removeToken(file, entry.sha256);
  cx.out.result(cx.command, {
    name: entry.name,
    sha256: entry.sha256,
    revokedOn,
    removedFromTokensFile: removed,
  });
  cx.out.line(
    `Revoked ${entry.name} on ${revokedOn.map((r) => r.dataset).join(", ")}: every replica serving them refuses it within 10 s.`,
  );
  if (removed) cx.out.note(`Removed ${entry.name} from ${file}.`);
  return ExitCode.ok;
}

// --- utils ---

/** The entry `token revoke` names: by --sha256, or by --name in the tokens file. */
async function tokenToRevoke(
  opts: Record<string, unknown>,
  file: string | undefined,
): Promise<{ name: string; sha256: string }> {
  const name = typeof opts.name === "string" ? opts.name : undefined;
  if (typeof opts.sha256 === "string") {
    const sha256 = opts.sha256.toLowerCase();
    if (!/^[0-9a-f]{64}$/.test(sha256)) {
      throw holdfastError("invalid-input", "parse", "--sha256 takes 64 hex digits", {
        hint: "the sha256 field of the token's entry in the tokens file",
      });
    }
    return { name: name ?? "(unnamed)", sha256 };
  }
  if (name === undefined || file === undefined) {
    throw holdfastError(
      "invalid-input",
      "parse",
      "token revoke needs --name with --tokens FILE, or --sha256",
      {
        hint: "holdfast token revoke <url> --name etl --tokens tokens.json",
      },
    );
  }
  const entry = (await loadTokens(file)).find((t) => t.name === name);
  if (!entry) {
    throw holdfastError("not-found", "parse", `no token named ${name} in ${file}`, {
      hint: "pass its --sha256 if the entry was already removed",
    });
  }
  return entry;
}
