// The TypeScript side of the cross-language tests: runs one operation of the built
// workspace packages (packages/*/dist) on a store and prints its answer as one JSON line.
// Usage: node ts_peer.mjs '<json request>'   (see python/tests/peer.py for the requests)
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const repo =
  process.env.HOLDFAST_TS_REPO ?? join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const load = (pkg) => import(join(repo, "packages", pkg, "dist", "index.js"));

const request = JSON.parse(process.argv[2]);

async function openStore(spec) {
  if (spec.kind === "local") {
    const { createLocalStore } = await load("backends-local");
    return createLocalStore({ root: spec.root, fsync: false });
  }
  if (spec.kind === "s3") {
    const { openS3Store } = await load("backends-s3");
    return openS3Store({
      bucket: spec.bucket,
      prefix: spec.prefix,
      endpoint: spec.endpoint,
      region: spec.region,
      forcePathStyle: true,
    });
  }
  if (spec.kind === "azure") {
    const { openAzureStore } = await load("backends-azure");
    return openAzureStore({
      container: spec.container,
      prefix: spec.prefix,
      connectionString: spec.connectionString,
    });
  }
  if (spec.kind === "gcs") {
    const { openGcsStore } = await load("backends-gcs");
    return openGcsStore({
      bucket: spec.bucket,
      prefix: spec.prefix,
      endpoint: spec.endpoint,
    });
  }
  throw new Error(`unknown store ${spec.kind}`);
}

const meta = (m) =>
  m === null ? null : { ...m, lastModified: m.lastModified.getTime(), body: undefined };

async function run() {
  const store = request.store ? await openStore(request.store) : undefined;
  const { createContext } = await load("protocol");
  const ctx = store ? createContext(store) : undefined;
  switch (request.op) {
    case "capabilities":
      return store.capabilities;
    case "put": {
      const precondition = request.ifMatch
        ? { ifMatch: request.ifMatch }
        : request.ifAbsent
          ? { ifNoneMatch: "*" }
          : undefined;
      return store.put(request.key, Buffer.from(request.body, "utf8"), { precondition });
    }
    case "head":
      return meta(await store.head(request.key));
    case "get": {
      const got = await store.get(request.key);
      return got === null ? null : { ...meta(got), body: Buffer.from(got.body).toString("utf8") };
    }
    case "list":
      return (await store.list(request.prefix)).objects.map(meta);
    case "delete":
      return store.delete(request.key, request.ifMatch ? { ifMatch: request.ifMatch } : {});
    case "hold-lock": {
      // Holds a key's OS-level lock (the one the local backend takes) for `ms`.
      const require = createRequire(join(repo, "packages", "backends-local", "package.json"));
      const native = require("fs-native-extensions");
      const { openSync, closeSync } = await import("node:fs");
      const fd = openSync(request.lockPath, "r+");
      if (!native.tryLock(fd)) throw new Error("lock already held");
      process.stdout.write(`${JSON.stringify({ ok: true, result: "locked" })}\n`);
      await new Promise((done) => setTimeout(done, request.ms));
      native.unlock(fd);
      closeSync(fd);
      return "unlocked";
    }
    case "acquire": {
      const { acquireLease } = await load("leases");
      const { holdfastLayout } = await load("dataset");
      return acquireLease(ctx, {
        format: holdfastLayout,
        branch: request.branch,
        version: request.version,
        ttlMs: request.ttlMs,
      });
    }
    case "renew": {
      const { renewLease } = await load("leases");
      return renewLease(ctx, request.lease);
    }
    case "release": {
      const { releaseLease } = await load("leases");
      await releaseLease(ctx, request.lease);
      return "released";
    }
    case "census": {
      const { censusLeases } = await load("leases");
      const census = censusLeases(ctx);
      const found = await census(request.branch, request.versions, new Date(request.referenceTime));
      return Object.fromEntries(found);
    }
    case "list-leases": {
      const { listLeases } = await load("leases");
      const out = [];
      for await (const entry of listLeases(ctx, request.branch ? { branch: request.branch } : {})) {
        out.push({ ...entry, lastModified: entry.lastModified.getTime() });
      }
      return out;
    }
    case "lance-read": {
      // A version as the TypeScript Lance format reads it (its listing, then its manifest
      // and everything it names): what format-lance refuses there, it throws.
      const { openLanceFormat } = await load("format-lance");
      const format = await openLanceFormat(ctx);
      for await (const _ of format.listVersions(ctx, request.branch)) {
        // listing teaches the branch's naming and refuses a mix or a detached version
      }
      const manifest = await format.readManifest(ctx, request.branch, request.version);
      return manifest === null ? null : { files: manifest.files.length };
    }
    case "lance-branch-names": {
      // holdfast's name of each Lance branch name, as the TypeScript format maps it.
      const { holdfastBranchName } = await import(
        join(repo, "packages", "format-lance", "dist", "branch-names.js")
      );
      return request.names.map((name) => holdfastBranchName(name));
    }
    default:
      throw new Error(`unknown op ${request.op}`);
  }
}

run().then(
  (result) => {
    process.stdout.write(`${JSON.stringify({ ok: true, result: result ?? null })}\n`);
  },
  (error) => {
    const shape = typeof error?.toJSON === "function" ? error.toJSON() : { message: String(error) };
    // A Lance refusal names its feature and flag (UnsupportedLanceDatasetError).
    if (error?.feature !== undefined) shape.feature = error.feature;
    if (error?.flag !== undefined) shape.flag = error.flag;
    process.stdout.write(`${JSON.stringify({ ok: false, error: shape })}\n`);
  },
);
