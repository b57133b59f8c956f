// One cleaner, one run, in its own process (tooling/bench/README.md, "Cleaners side by
// side"): argv[2] is `holdfast` or `lancedb`, argv[3] a JSON target. Prints one JSON line:
// wall time and process CPU (user + system, every thread) of the cleanup call alone, the
// process's peak RSS, and for holdfast its store requests. The pylance counterpart is
// `pylance-cleaner.py`. The S3 backend and LanceDB are imported only by the runs that use
// them, before the clock starts: a local holdfast run loads neither the AWS SDK nor LanceDB,
// as a caller's process cleaning a local table would not.
import { performance } from "node:perf_hooks";
import { createLocalStore } from "@holdfast/backends-local";
import { cleanup } from "@holdfast/cleanup";
import { CountingStore, type ObjectStore } from "@holdfast/conditional-store";
import { createContext } from "@holdfast/dataset";
import { openLanceFormat } from "@holdfast/format-lance";

/** Where the table is: a local folder, or an S3 prefix reached through an endpoint. */
export type CleanerTarget =
  | {
      readonly kind: "local";
      readonly root: string;
      readonly table: string;
      /** `--warm`: a second copy cleaned first, untimed, so the timed call runs warm code. */
      readonly warmRoot?: string | undefined;
    }
  | {
      readonly kind: "s3";
      readonly bucket: string;
      readonly prefix: string;
      readonly table: string;
      readonly endpoint: string;
      readonly region: string;
      readonly accessKeyId: string;
      readonly secretAccessKey: string;
    };

/** What a child prints. */
export interface CleanerResult {
  readonly ms: number;
  readonly cpuMs: number;
  readonly peakRssMiB: number;
  /** Store requests holdfast sent (its CountingStore); null for Lance. */
  readonly requests: number | null;
}

/** The object_store options Lance takes for the S3 target. */
export function lanceStorageOptions(t: Extract<CleanerTarget, { kind: "s3" }>) {
  return {
    aws_endpoint: t.endpoint,
    aws_access_key_id: t.accessKeyId,
    aws_secret_access_key: t.secretAccessKey,
    aws_region: t.region,
    allow_http: "true",
    aws_virtual_hosted_style_request: "false",
  };
}

async function holdfastStore(t: CleanerTarget): Promise<ObjectStore> {
  if (t.kind === "local") return createLocalStore({ root: `${t.root}/${t.table}.lance` });
  const { openS3Store } = await import("@holdfast/backends-s3");
  return openS3Store({
    bucket: t.bucket,
    prefix: `${t.prefix}/${t.table}.lance`,
    region: t.region,
    endpoint: t.endpoint,
    forcePathStyle: true,
    credentials: { accessKeyId: t.accessKeyId, secretAccessKey: t.secretAccessKey },
  });
}

async function main() {
  const [who, targetJson] = process.argv.slice(2);
  if ((who !== "holdfast" && who !== "lancedb") || !targetJson) {
    throw new Error("usage: cleaner-child.ts holdfast|lancedb '<target json>'");
  }
  const target = JSON.parse(targetJson) as CleanerTarget;
  const prepare = async (target: CleanerTarget) =>
    who === "holdfast" ? holdfast(target) : lance(target);
  if (target.kind === "local" && target.warmRoot) {
    await (await prepare({ ...target, root: target.warmRoot, warmRoot: undefined })).run();
  }
  const { run, counted } = await prepare(target);
  const cpu = process.cpuUsage();
  const started = performance.now();
  await run();
  const ms = performance.now() - started;
  const used = process.cpuUsage(cpu);
  const requests = counted();
  const result: CleanerResult = {
    ms,
    cpuMs: (used.user + used.system) / 1000,
    peakRssMiB: process.resourceUsage().maxRSS / 1024,
    requests,
  };
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

async function holdfast(target: CleanerTarget) {
  let requests: number | null = null;
  // The store is opened before the clock starts (no request), as a caller holds one.
  const counting = new CountingStore(await holdfastStore(target));
  const run = async () => {
    // Format detection is part of the call: a caller opens the format, then cleans.
    const ctx = createContext(counting);
    const format = await openLanceFormat(ctx);
    await cleanup(ctx, { retainVersions: 1, minVersionAgeMs: 0 }, { format });
    requests = counting.totalRequests();
  };
  return { run, counted: () => requests };
}

async function lance(target: CleanerTarget) {
  const uri = target.kind === "local" ? target.root : `s3://${target.bucket}/${target.prefix}`;
  const storageOptions = target.kind === "local" ? {} : lanceStorageOptions(target);
  const lancedb = await import("@lancedb/lancedb");
  const run = async () => {
    const db = await lancedb.connect(uri, { storageOptions });
    const table = await db.openTable(target.table);
    // Every version but the latest; unreferenced young files stay (as pylance's run).
    await table.optimize({ cleanupOlderThan: new Date(), deleteUnverified: false });
    table.close();
  };
  return { run, counted: () => null };
}

await main();
