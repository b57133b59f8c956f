import { readFile } from "node:fs/promises";
import { basename, join, resolve } from "node:path";
import { holdfastError } from "@holdfast/conditional-store";
import {
  buildServer,
  type DatasetSource,
  hashToken,
  loadTokens,
  ServerConfigFileSchema,
  type TokenEntry,
} from "@holdfast/server";
import { Command } from "commander";
import { parseCountArg } from "../args.js";
import { parseDuration } from "../duration.js";
import { ExitCode } from "../exit-codes.js";
import type { CliIo } from "../output.js";
import { type CommandContext, type Registrar, withStoreOptions } from "../program.js";
import { openTarget, parseTarget } from "../target.js";
import { DELETE_CONCURRENCY_FLAG, deleteRateOptions, MAX_DELETES_FLAG } from "./cleanup-run.js";

/** `serve`: holdfast as an HTTP service (apps/server). */
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
          )
          .option(...MAX_DELETES_FLAG)
          .option(...DELETE_CONCURRENCY_FLAG),
      ),
      "serve",
      [
        "holdfast serve ./my-dataset",
        "holdfast serve s3://bucket/datasets --dataset events clicks --tokens tokens.json --host 0.0.0.0",
      ],
      serveCommand,
    ),
  );
}

/** `holdfast serve`. */
async function serveCommand(
  [url]: readonly string[],
  opts: Record<string, unknown>,
  cx: CommandContext,
): Promise<number> {
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
    ...deleteRateOptions(opts),
    logger: cx.out.json ? false : { level: "info" },
  });
  const address = await app.listen({ host: String(opts.host), port });
  cx.out.result(cx.command, {
    url: address,
    datasets: sources.map((s) => s.name),
    ...(tokens.ephemeral === undefined ? {} : { adminToken: tokens.ephemeral }),
  });
  cx.out.note(`holdfast server on ${address}: dashboard ${address}/, API docs ${address}/docs`);
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
}

// --- utils ---

/** The datasets `serve` and `token revoke` name: the URL itself, or one per `--dataset` below it. */
export async function openSources(
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

/** The tokens file: `--tokens`, else `$HOLDFAST_TOKENS_FILE`. */
export function tokensFile(opts: Record<string, unknown>, io: CliIo): string | undefined {
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
