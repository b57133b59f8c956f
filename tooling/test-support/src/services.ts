import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";

/** A test service started by `tooling/services/<name>-start.sh`. */
export type ServiceName = "rgw" | "azurite" | "gcs";

/** The variable a service's settings cannot do without. */
const REQUIRED: Record<ServiceName, string> = {
  rgw: "HOLDFAST_S3_ENDPOINT",
  azurite: "AZURE_STORAGE_CONNECTION_STRING",
  gcs: "STORAGE_EMULATOR_HOST",
};

/**
 * A service's settings: its env file (`$HOLDFAST_SERVICES_DIR/<name>.env`, default
 * `/tmp/holdfast-services`; RGW's also `$HOLDFAST_RGW_ENV_FILE`) overlaid by the process
 * environment's `HOLDFAST_*`, `AWS_*`, `AZURE_*` and `STORAGE_EMULATOR_HOST`. Throws, naming
 * the start command, when neither sets the service's endpoint: tests never skip.
 */
export function readServiceEnv(name: ServiceName): Record<string, string> {
  const file =
    name === "rgw" && process.env.HOLDFAST_RGW_ENV_FILE
      ? process.env.HOLDFAST_RGW_ENV_FILE
      : join(process.env.HOLDFAST_SERVICES_DIR ?? "/tmp/holdfast-services", `${name}.env`);
  const vars: Record<string, string> = {};
  if (existsSync(file)) {
    for (const line of readFileSync(file, "utf8").split("\n")) {
      const match = /^([A-Z0-9_]+)=(.*)$/.exec(line.trim());
      // Values may be quoted as a shell would read them.
      if (match) vars[match[1]!] = match[2]!.replace(/^'(.*)'$|^"(.*)"$/, "$1$2");
    }
  }
  for (const [key, value] of Object.entries(process.env)) {
    if (value === undefined || value === "") continue;
    if (/^(HOLDFAST_|AWS_|AZURE_)/.test(key) || key === "STORAGE_EMULATOR_HOST") vars[key] = value;
  }
  if (!vars[REQUIRED[name]]) {
    throw new Error(
      `the ${name} test service is not configured: no ${REQUIRED[name]} in the environment or in ${file}. Start it with: bash tooling/services/${name}-start.sh (npm test does this)`,
    );
  }
  return vars;
}

/** Connection settings of the real S3 test service (Ceph RGW). */
export interface RgwEnv {
  endpoint: string;
  bucket: string;
  region: string;
  forcePathStyle: boolean;
  accessKeyId: string;
  secretAccessKey: string;
}

/** RGW's settings; throws (never skips) when a credential or the bucket is missing. */
export function rgwEnv(): RgwEnv {
  const env = readServiceEnv("rgw");
  const need = (key: string) => {
    const value = env[key];
    if (!value) {
      throw new Error(
        `the rgw test service lacks ${key}: start it with bash tooling/services/rgw-start.sh`,
      );
    }
    return value;
  };
  return {
    endpoint: need("HOLDFAST_S3_ENDPOINT"),
    bucket: need("HOLDFAST_S3_BUCKET"),
    region: env.HOLDFAST_S3_REGION ?? "us-east-1",
    forcePathStyle: (env.HOLDFAST_S3_PATH_STYLE ?? "true") === "true",
    accessKeyId: need("AWS_ACCESS_KEY_ID"),
    secretAccessKey: need("AWS_SECRET_ACCESS_KEY"),
  };
}

/** Connection settings of Azurite. */
export interface AzuriteEnv {
  connectionString: string;
  container: string;
  /** `http://127.0.0.1:<port>` of the blob service (what a fault proxy forwards to). */
  origin: string;
}

/** Azurite's settings; throws when its connection string names no blob endpoint. */
export function azuriteEnv(): AzuriteEnv {
  const env = readServiceEnv("azurite");
  const connectionString = env.AZURE_STORAGE_CONNECTION_STRING!;
  const endpoint = /BlobEndpoint=([^;]+)/.exec(connectionString)?.[1];
  if (!endpoint) {
    throw new Error(
      "the Azurite connection string has no BlobEndpoint: start it with bash tooling/services/azurite-start.sh",
    );
  }
  return {
    connectionString,
    container: env.HOLDFAST_AZURE_CONTAINER || "holdfast-test",
    origin: new URL(endpoint).origin,
  };
}

/** Connection settings of the GCS emulator (fake-gcs-server). */
export interface GcsEnv {
  /** `http://127.0.0.1:<port>` of the JSON API (what a fault proxy forwards to). */
  endpoint: string;
  bucket: string;
}

/** The GCS emulator's settings. */
export function gcsEnv(): GcsEnv {
  const env = readServiceEnv("gcs");
  return {
    endpoint: new URL(env.STORAGE_EMULATOR_HOST!).origin,
    bucket: env.HOLDFAST_GCS_BUCKET || "holdfast-test",
  };
}
