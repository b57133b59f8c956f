// The fixed cost of one holdfast cleanup, phase by phase, in measures that do not depend on
// the machine's load (tooling/bench/README.md, "Cost per phase"): store requests by type and
// key folder, and, under `strace -f`, system calls. Cleans a copy of the cached LanceDB
// table of argv[2] versions (default 200) with the settings of the Lance comparison and
// prints one JSON line. A phase change is marked in the system-call trace by a `stat` of a
// path that cannot exist (`/nonexistent/holdfast-phase/<phase>`), so `cost-trace.ts` can
// split a trace by phase.
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { Session } from "node:inspector";
import { join } from "node:path";
import { createLocalStore } from "@holdfast/backends-local";
import { openS3Store } from "@holdfast/backends-s3";
import { cleanup } from "@holdfast/cleanup";
import type {
  DeleteManyResult,
  DeleteOptions,
  GetResult,
  ListOptions,
  ListPage,
  ObjectMeta,
  ObjectStore,
  PutOptions,
  PutResult,
} from "@holdfast/conditional-store";
import { startFaultProxy } from "@holdfast/fault-proxy";
import { openLanceFormat } from "@holdfast/format-lance";
import { createContext } from "@holdfast/protocol";
import { copyLanceTable, rgwEnv } from "./lance-section.js";
import { removeAll } from "./targets.js";

type Op = "get" | "head" | "put" | "delete" | "deleteMany" | "list";

/** Store requests per phase, by operation and by the key's first two path segments. */
class PhaseCountingStore implements ObjectStore {
  readonly backend: string;
  readonly location: string;
  readonly capabilities: ObjectStore["capabilities"];
  phase = "start";
  readonly counts = new Map<string, Map<string, number>>();

  constructor(private readonly inner: ObjectStore) {
    this.backend = inner.backend;
    this.location = inner.location;
    this.capabilities = inner.capabilities;
  }

  #count(op: Op, key: string) {
    // The key's folder (at most two levels): `_versions`, `_holdfast/retirement`, `data`.
    const parts = op === "list" ? key.split("/").filter(Boolean) : key.split("/").slice(0, -1);
    const folder = parts.slice(0, 2).join("/") || "(root)";
    const phase = this.counts.get(this.phase) ?? new Map<string, number>();
    this.counts.set(this.phase, phase);
    for (const name of [op, `${op} ${folder}`]) phase.set(name, (phase.get(name) ?? 0) + 1);
    if (process.env.COST_PROBE_LOG) process.stderr.write(`${this.phase} ${op} ${key}\n`);
  }

  get(key: string, options?: { signal?: AbortSignal | undefined }): Promise<GetResult | null> {
    this.#count("get", key);
    return this.inner.get(key, options);
  }
  head(key: string, options?: { signal?: AbortSignal | undefined }): Promise<ObjectMeta | null> {
    this.#count("head", key);
    return this.inner.head(key, options);
  }
  put(key: string, body: Uint8Array, options?: PutOptions): Promise<PutResult> {
    this.#count("put", key);
    return this.inner.put(key, body, options);
  }
  delete(key: string, options?: DeleteOptions): Promise<void> {
    this.#count("delete", key);
    return this.inner.delete(key, options);
  }
  deleteMany(
    keys: readonly string[],
    options?: { signal?: AbortSignal | undefined },
  ): Promise<DeleteManyResult> {
    this.#count("deleteMany", keys[0] ?? "");
    return this.inner.deleteMany(keys, options);
  }
  list(prefix: string, options?: ListOptions): Promise<ListPage> {
    this.#count("list", prefix);
    return this.inner.list(prefix, options);
  }
}

function mark(phase: string) {
  try {
    statSync(`/nonexistent/holdfast-phase/${phase}`);
  } catch {
    // the marker never exists
  }
}

const args = process.argv.slice(2);
const versions = Number(args.find((a) => !a.startsWith("--")) ?? 200);
// --warm: one cleanup of another copy first, so the measured one runs on warm code (as runs
// after the first of the record do). --profile=<file>: a CPU profile of the measured cleanup only.
const warm = args.includes("--warm");
const profileTo = args.find((a) => a.startsWith("--profile="))?.slice("--profile=".length);

async function plainCleanup(table: string) {
  const ctx = createContext(createLocalStore({ root: table }));
  const format = await openLanceFormat(ctx);
  await cleanup(ctx, { retainVersions: 1, minVersionAgeMs: 0 }, { format });
}

if (warm) {
  const copy = await copyLanceTable(versions, "probe-warm");
  try {
    await plainCleanup(copy.table);
  } finally {
    copy.dispose();
  }
}
const session = profileTo ? new Session() : undefined;
const post = (method: string, params?: object) =>
  new Promise<unknown>((resolve, reject) =>
    session!.post(method, params, (error, result) => (error ? reject(error) : resolve(result))),
  );
// --rgw: the copy is uploaded to the test RGW and cleaned there, through a counting HTTP proxy
// (holdfast's minimum age is 0 here, so the copies' fresh Last-Modified stamps do not matter).
const rgw = args.includes("--rgw");
const { table, dispose } = await copyLanceTable(versions, "probe");
let proxy: Awaited<ReturnType<typeof startFaultProxy>> | undefined;
let remote: ObjectStore | undefined;
if (rgw) {
  const env = rgwEnv();
  proxy = await startFaultProxy({ target: env.endpoint });
  const prefix = `cost-probe-${Date.now()}/events.lance`;
  const open = (endpoint: string) =>
    openS3Store({
      bucket: env.bucket,
      prefix,
      region: env.region,
      endpoint,
      forcePathStyle: true,
      credentials: { accessKeyId: env.accessKeyId, secretAccessKey: env.secretAccessKey },
    });
  const direct = await open(env.endpoint);
  const files: string[] = [];
  const walk = (dir: string, rel: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      if (e.isDirectory()) walk(join(dir, e.name), `${rel}${e.name}/`);
      else files.push(`${rel}${e.name}`);
    }
  };
  walk(table, "");
  const queue = [...files];
  const upload = async () => {
    for (let key = queue.pop(); key !== undefined; key = queue.pop()) {
      await direct.put(key, readFileSync(join(table, key)));
    }
  };
  await Promise.all(Array.from({ length: 16 }, upload));
  remote = await open(proxy.url);
}
if (session) {
  session.connect();
  await post("Profiler.enable");
  await post("Profiler.setSamplingInterval", { interval: 100 });
  await post("Profiler.start");
}
try {
  const store = new PhaseCountingStore(remote ?? createLocalStore({ root: table }));
  const httpBefore = proxy?.requests.length ?? 0;
  const setPhase = (phase: string) => {
    if (store.phase === phase) return;
    store.phase = phase;
    mark(phase);
  };
  setPhase("open");
  const ctx = createContext(store);
  const format = await openLanceFormat(ctx);
  setPhase("start");
  const stats = await cleanup(
    ctx,
    { retainVersions: 1, minVersionAgeMs: 0 },
    {
      format,
      onProgress: (p) => setPhase(p.phase),
    },
  );
  setPhase("end");
  if (session) {
    const { profile } = (await post("Profiler.stop")) as { profile: unknown };
    writeFileSync(profileTo!, JSON.stringify(profile));
  }
  const phases: Record<string, Record<string, number>> = {};
  for (const [phase, counts] of store.counts) {
    phases[phase] = Object.fromEntries([...counts].sort(([a], [b]) => a.localeCompare(b)));
  }
  process.stdout.write(
    `${JSON.stringify({ versions, target: rgw ? "rgw" : "local", deleted: stats.objectsDeleted.total, requests: stats.requests.total, http: proxy ? proxy.requests.length - httpBefore : null, phases })}\n`,
  );
} finally {
  if (remote) await removeAll(remote);
  await proxy?.close();
  dispose();
}
