import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openAzureStore } from "@holdfast/backends-azure";
import { openGcsStore } from "@holdfast/backends-gcs";
import { createLocalStore } from "@holdfast/backends-local";
import { openS3Store } from "@holdfast/backends-s3";
import { type ObjectStore, ulidIds } from "@holdfast/conditional-store";
import { commitVersion, initDataset, writeDataFile } from "@holdfast/dataset";
import { createContext, type ProtocolContext } from "@holdfast/protocol";
import { readServiceEnv } from "@holdfast/test-support";
import { buildServer, hashToken, type ServerConfig, type TokenEntry } from "../src/index.js";

/** The four backends every route suite runs on. */
export type BackendName = "local" | "rgw" | "azurite" | "gcs";
export const BACKENDS: readonly BackendName[] = ["local", "rgw", "azurite", "gcs"];

const ids = ulidIds();

/**
 * A fresh, empty store on a real backend; `dispose` removes a local directory. `url` and
 * `env` name the same store to a child process (`holdfast serve <url>` with `env`).
 */
export async function freshStore(backend: BackendName): Promise<{
  store: ObjectStore;
  dispose: () => Promise<void>;
  url: string;
  env: Record<string, string>;
}> {
  switch (backend) {
    case "local": {
      const root = await mkdtemp(join(tmpdir(), "holdfast-server-"));
      return {
        store: createLocalStore({ root, createRoot: true }),
        dispose: () => rm(root, { recursive: true, force: true }),
        url: root,
        env: {},
      };
    }
    case "rgw": {
      const env = readServiceEnv("rgw");
      const prefix = `srv-${ids.next().slice(-12)}`;
      const store = await openS3Store({
        bucket: env.HOLDFAST_S3_BUCKET!,
        prefix,
        region: env.HOLDFAST_S3_REGION ?? "us-east-1",
        endpoint: env.HOLDFAST_S3_ENDPOINT!,
        forcePathStyle: true,
        credentials: {
          accessKeyId: env.AWS_ACCESS_KEY_ID!,
          secretAccessKey: env.AWS_SECRET_ACCESS_KEY!,
        },
      });
      return {
        store,
        dispose: async () => {},
        url: `s3://${env.HOLDFAST_S3_BUCKET}/${prefix}`,
        env: pick(env, [
          "HOLDFAST_S3_ENDPOINT",
          "HOLDFAST_S3_REGION",
          "HOLDFAST_S3_PATH_STYLE",
          "AWS_ACCESS_KEY_ID",
          "AWS_SECRET_ACCESS_KEY",
        ]),
      };
    }
    case "azurite": {
      const env = readServiceEnv("azurite");
      const container = env.HOLDFAST_AZURE_CONTAINER ?? "holdfast-test";
      const prefix = `srv-${ids.next().slice(-12)}`;
      const store = await openAzureStore({
        container,
        prefix,
        connectionString: env.AZURE_STORAGE_CONNECTION_STRING!,
      });
      return {
        store,
        dispose: async () => {},
        url: `az://${container}/${prefix}`,
        env: pick(env, ["AZURE_STORAGE_CONNECTION_STRING"]),
      };
    }
    case "gcs": {
      const env = readServiceEnv("gcs");
      const bucket = env.HOLDFAST_GCS_BUCKET ?? "holdfast-test";
      const prefix = `srv-${ids.next().slice(-12)}`;
      const store = await openGcsStore({
        bucket,
        prefix,
        endpoint: env.STORAGE_EMULATOR_HOST!,
      });
      return {
        store,
        dispose: async () => {},
        url: `gs://${bucket}/${prefix}`,
        env: pick(env, ["STORAGE_EMULATOR_HOST"]),
      };
    }
  }
}

/** Creates a dataset with `versions` versions on main, one small data file each. */
export async function seedDataset(store: ObjectStore, versions: number): Promise<ProtocolContext> {
  const ctx = createContext(store);
  await initDataset(ctx);
  for (let i = 1; i <= versions; i++) {
    const file = await writeDataFile(ctx, new TextEncoder().encode(`version ${i}`));
    await commitVersion(ctx, { branch: "main", files: [file] });
  }
  return ctx;
}

/** One token per role, with their file entries. */
export const TOKENS = {
  reader: "hf_test_reader_token",
  writer: "hf_test_writer_token",
  admin: "hf_test_admin_token",
} as const;

export const TOKEN_ENTRIES: TokenEntry[] = (["reader", "writer", "admin"] as const).map((role) => ({
  name: `test-${role}`,
  role,
  sha256: hashToken(TOKENS[role]),
}));

/** Builds a server (no logging, no rate limit unless asked) over the given datasets. */
export function testServer(
  datasets: ServerConfig["datasets"],
  overrides: Partial<ServerConfig> = {},
) {
  return buildServer({
    datasets,
    tokens: TOKEN_ENTRIES,
    logger: false,
    rateLimit: false,
    // Suites send many unknown tokens from one address (the auth matrix); auth-safety tests the limit.
    failedAuthLimit: false,
    // Suites that count store requests see no re-read of the revoked tokens mid-suite.
    revocationRefreshMs: 60_000,
    dashboardDir: null,
    ...overrides,
  });
}

/** Authorization header for a role. */
export function as(role: keyof typeof TOKENS): { authorization: string } {
  return { authorization: `Bearer ${TOKENS[role]}` };
}

// --- utils ---

function pick(vars: Record<string, string | undefined>, names: string[]): Record<string, string> {
  const picked: Record<string, string> = {};
  for (const name of names) if (vars[name] !== undefined) picked[name] = vars[name]!;
  return picked;
}
