import { readFile } from "node:fs/promises";
import { basename, join, resolve } from "node:path";
import { holdfastError } from "@holdfast/conditional-store";
import { createContext } from "@holdfast/dataset";
import {
  buildServer,
  createToken,
  type DatasetSource,
  hashToken,
  loadTokens,
  ROLES,
  type Role,
  removeToken,
  revokeToken,
  ServerConfigFileSchema,
  type TokenEntry,
} from "@holdfast/server";
import { Command } from "commander";
import { parseCountArg } from "../args.js";
import { parseDuration } from "../duration.js";
import { ExitCode } from "../exit-codes.js";
import type { CliIo } from "../output.js";
import { type Registrar, withStoreOptions } from "../program.js";
import { openTarget, parseTarget } from "../target.js";

/** `serve` and `token create`: holdfast as an HTTP service (apps/server). */
export function registerServe(r: Registrar, program: Command): void {
  program.addCommand(
    r.leaf(
      withStoreOptions(
        new Command("serve")
          .description(
            "serve datasets over HTTP: a JSON API (OpenAPI at /openapi.json, docs at /docs) and a dashboard at /",
          )
          .argument("<url>", "storage URL of a dataset, or of the datasets named by --dataset")
          .option(
            "--dataset <name...>",
            "serve these datasets under <url>/<name> (default: <url> itself)",
          )
          .option("--tokens <file>", "bearer tokens file (env HOLDFAST_TOKENS_FILE)")
          .option("--config <file>", "JSON config: scheduled cleanup and recovery per dataset")
          .option("--host <host>", "address to listen on", "127.0.0.1")
          .option("--port <port>", "port to listen on (0: any free port)", "8080")
          .option("--tls-cert <file>", "serve HTTPS with this PEM certificate (with --tls-key)")
          .option("--tls-key <file>", "PEM private key for --tls-cert")
          .option("--cors-origin <origin...>", "allow these origins (CORS is off by default)")
          .option("--rate-limit <n>", "requests per minute per token", "600")
          .option("--replica-id <id>", "name of this replica in job records and the cleanup lock")
          .option(
            "--cleanup-lock-bound <duration>",
            "storage-time bound of the cleanup lock and run records: a dead replica's cleanup is taken over after it (default 60s)",
          ),
      ),
      "serve",
      [
        "holdfast serve ./my-dataset",
        "holdfast serve s3://bucket/datasets --dataset events clicks --tokens tokens.json --host 0.0.0.0",
      ],
      async ([url], opts, cx) => {
        const sources = await openSources(url!, opts, cx.io);
        const tokens = await resolveTokens(opts, cx.io);
        const config = await readConfig(opts.config);
        const tls = await readTls(opts);
        const port = parseCountArg(String(opts.port), "--port");
        const app = await buildServer({
          datasets: sources,
          tokens: tokens.entries,
          schedules: config.schedules,
          rateLimit: {
            max: parseCountArg(String(opts.rateLimit), "--rate-limit", 1),
            windowMs: 60_000,
          },
          ...(tls === undefined ? {} : { https: tls }),
          ...(Array.isArray(opts.corsOrigin) ? { corsOrigins: opts.corsOrigin.map(String) } : {}),
          ...(typeof opts.replicaId === "string" ? { replicaId: opts.replicaId } : {}),
          ...(opts.cleanupLockBound === undefined
            ? {}
            : {
                lockBoundMs: parseDuration(String(opts.cleanupLockBound), "--cleanup-lock-bound"),
              }),
          logger: cx.out.json ? false : { level: "info" },
        });
        const address = await app.listen({ host: String(opts.host), port });
        cx.out.result(cx.command, {
          url: address,
          datasets: sources.map((s) => s.name),
          ...(tokens.ephemeral === undefined ? {} : { adminToken: tokens.ephemeral }),
        });
        cx.out.note(
          `holdfast server on ${address}: dashboard ${address}/, API docs ${address}/docs`,
        );
        if (tokens.ephemeral !== undefined) {
          cx.out.note(
            `No tokens file: this run accepts one admin token, shown once and forgotten at exit:\n  ${tokens.ephemeral}\n` +
              "For lasting tokens: holdfast token create --role reader --name <name> --tokens tokens.json",
          );
        }
        await new Promise<void>((resolve) => {
          if (cx.interrupt.aborted) return resolve();
          cx.interrupt.addEventListener("abort", () => resolve(), { once: true });
        });
        // Graceful: in-flight requests and a running cleanup finish before the process exits.
        await app.close();
        return ExitCode.ok;
      },
    ),
  );

  const token = new Command("token").description("bearer tokens of holdfast serve");
  token.addCommand(
    r.leaf(
      new Command("create")
        .description("create a token, add its hash to the tokens file, and print the token once")
        .requiredOption("--role <role>", `one of ${ROLES.join(", ")}`)
        .requiredOption("--name <name>", "who or what uses it, e.g. etl")
        .option("--tokens <file>", "tokens file (env HOLDFAST_TOKENS_FILE; created when missing)"),
      "token create",
      ["holdfast token create --role reader --name etl --tokens tokens.json"],
      async (_args, opts, cx) => {
        const file = tokensFile(opts, cx.io);
        if (file === undefined) {
          throw holdfastError("invalid-input", "parse", "token create needs --tokens FILE", {
            hint: "or set HOLDFAST_TOKENS_FILE",
          });
        }
        const role = String(opts.role);
        if (!(ROLES as readonly string[]).includes(role)) {
          throw holdfastError(
            "invalid-input",
            "parse",
            `--role must be one of ${ROLES.join(", ")}`,
          );
        }
        const { token: secret, entry } = await createToken(file, {
          name: String(opts.name),
          role: role as Role,
        });
        cx.out.result(cx.command, {
          name: entry.name,
          role: entry.role,
          token: secret,
          tokensFile: file,
        });
        cx.out.line(secret);
        cx.out.note(`Added ${entry.name} (${entry.role}) to ${file}. The token is shown only now.`);
        return ExitCode.ok;
      },
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
      async ([url], opts, cx) => {
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
      },
    ),
  );
  program.addCommand(token);
}

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

// --- utils ---

async function openSources(
  url: string,
  opts: Record<string, unknown>,
  io: CliIo,
): Promise<DatasetSource[]> {
  const base = parseTarget(url, opts, io);
  const names = Array.isArray(opts.dataset) ? opts.dataset.map(String) : undefined;
  if (names === undefined) {
    const last =
      base.url.scheme === "file" ? basename(base.url.root) : base.url.prefix.split("/").at(-1);
    const name =
      last !== undefined && /^[A-Za-z0-9_][A-Za-z0-9._-]*$/.test(last) ? last : "default";
    return [{ name, store: await openTarget(base, io) }];
  }
  const sources: DatasetSource[] = [];
  for (const name of names) {
    if (!/^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$/.test(name)) {
      throw holdfastError(
        "invalid-input",
        "parse",
        `invalid --dataset name ${JSON.stringify(name)}`,
      );
    }
    const sub = base.url.scheme === "file" ? join(base.url.root, name) : `${base.display}/${name}`;
    sources.push({ name, store: await openTarget(parseTarget(sub, opts, io), io) });
  }
  return sources;
}

function tokensFile(opts: Record<string, unknown>, io: CliIo): string | undefined {
  const file = typeof opts.tokens === "string" ? opts.tokens : io.env.HOLDFAST_TOKENS_FILE;
  return file === undefined || file === "" ? undefined : resolve(io.cwd, file);
}

async function resolveTokens(
  opts: Record<string, unknown>,
  io: CliIo,
): Promise<{ entries: TokenEntry[]; ephemeral?: string }> {
  const file = tokensFile(opts, io);
  if (file !== undefined) return { entries: await loadTokens(file) };
  // No file: one admin token for this run only, so `holdfast serve ./ds` works at once.
  const ephemeral = `hf_${crypto.getRandomValues(new Uint8Array(32)).reduce((s, b) => s + b.toString(16).padStart(2, "0"), "")}`;
  return {
    entries: [{ name: "session-admin", role: "admin", sha256: hashToken(ephemeral) }],
    ephemeral,
  };
}

async function readConfig(path: unknown) {
  if (typeof path !== "string") return { schedules: [] };
  const text = await readFile(path, "utf8").catch((error: unknown) => {
    throw holdfastError("invalid-input", "parse", `cannot read --config ${path}`, { cause: error });
  });
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw holdfastError("invalid-input", "parse", `--config ${path} is not JSON`, { cause: error });
  }
  const parsed = ServerConfigFileSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw holdfastError(
      "invalid-input",
      "parse",
      `--config ${path}: ${issue?.path.join(".")}: ${issue?.message}`,
    );
  }
  return parsed.data;
}

async function readTls(opts: Record<string, unknown>) {
  const cert = typeof opts.tlsCert === "string" ? opts.tlsCert : undefined;
  const key = typeof opts.tlsKey === "string" ? opts.tlsKey : undefined;
  if (cert === undefined && key === undefined) return undefined;
  if (cert === undefined || key === undefined) {
    throw holdfastError("invalid-input", "parse", "--tls-cert and --tls-key go together");
  }
  return { cert: await readFile(cert), key: await readFile(key) };
}
