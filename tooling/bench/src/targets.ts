import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createLocalStore } from "@holdfast/backends-local";
import { createS3Store } from "@holdfast/backends-s3";
import type { ObjectStore } from "@holdfast/conditional-store";
import { ulid } from "ulid";

/** A backend the record measures: opens a fresh, empty store per measurement. */
export interface Target {
  readonly name: string;
  /** A new empty store (a temp directory, or a fresh prefix in the bucket/container). */
  open(): Promise<{ store: ObjectStore; dispose(): Promise<void> }>;
}

/** Local disk, RGW, Azurite and fake-gcs-server when their env (tooling/services/*-start.sh) is present. */
export async function availableTargets(): Promise<{ targets: Target[]; missing: string[] }> {
  const targets: Target[] = [localTarget()];
  const missing: string[] = [];
  const env = process.env;
  if (env.HOLDFAST_S3_ENDPOINT && env.HOLDFAST_S3_BUCKET) targets.push(rgwTarget());
  else missing.push("rgw (source /tmp/holdfast-services/rgw.env)");
  if (env.AZURE_STORAGE_CONNECTION_STRING && env.HOLDFAST_AZURE_CONTAINER) {
    targets.push(await azuriteTarget());
  } else missing.push("azurite (source /tmp/holdfast-services/azurite.env)");
  if (env.STORAGE_EMULATOR_HOST && env.HOLDFAST_GCS_BUCKET) targets.push(await gcsTarget());
  else missing.push("gcs (source /tmp/holdfast-services/gcs.env)");
  return { targets, missing };
}

export function localTarget(): Target {
  return {
    name: "local",
    async open() {
      const root = await mkdtemp(join(tmpdir(), "holdfast-record-"));
      return {
        store: createLocalStore({ root }),
        dispose: () => rm(root, { recursive: true, force: true }),
      };
    },
  };
}

function rgwTarget(): Target {
  const env = process.env;
  return {
    name: "rgw",
    async open() {
      const store = createS3Store({
        bucket: env.HOLDFAST_S3_BUCKET!,
        prefix: `bench-${ulid().toLowerCase()}`,
        endpoint: env.HOLDFAST_S3_ENDPOINT,
        region: env.HOLDFAST_S3_REGION ?? "us-east-1",
        forcePathStyle: true,
        // The test RGW compares If-Match byte for byte and ignores it on DELETE.
        quoteIfMatch: false,
        conditionalDelete: false,
      });
      return { store, dispose: () => removeAll(store) };
    },
  };
}

async function azuriteTarget(): Promise<Target> {
  const { createAzureStore } = await import("@holdfast/backends-azure");
  const env = process.env;
  return {
    name: "azurite",
    async open() {
      const store = createAzureStore({
        container: env.HOLDFAST_AZURE_CONTAINER!,
        prefix: `bench-${ulid().toLowerCase()}`,
        connectionString: env.AZURE_STORAGE_CONNECTION_STRING!,
      });
      return { store, dispose: () => removeAll(store) };
    },
  };
}

async function gcsTarget(): Promise<Target> {
  const { createGcsStore } = await import("@holdfast/backends-gcs");
  const env = process.env;
  return {
    name: "gcs",
    async open() {
      const store = createGcsStore({
        bucket: env.HOLDFAST_GCS_BUCKET!,
        prefix: `bench-${ulid().toLowerCase()}`,
        endpoint: new URL(env.STORAGE_EMULATOR_HOST!).origin,
        // fake-gcs-server ignores ifGenerationMatch on delete (packages/backends-gcs README).
        conditionalDelete: false,
      });
      return { store, dispose: () => removeAll(store) };
    },
  };
}

/** Empties a remote prefix (what a cleanup left: retained versions, leases, records). */
export async function removeAll(store: ObjectStore): Promise<void> {
  const size = Math.max(1, store.capabilities.maxBatchDelete);
  for (;;) {
    const page = await store.list("", { pageSize: size });
    if (page.objects.length === 0) return;
    await store.deleteMany(page.objects.map((o) => o.key));
  }
}
