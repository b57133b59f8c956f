import { existsSync, readFileSync } from "node:fs";
import { ulid } from "ulid";
import type { S3StoreOptions } from "../src/index.js";

/** Env file written by tooling/services/rgw-start.sh. */
export const RGW_ENV_FILE = process.env.HOLDFAST_RGW_ENV_FILE ?? "/tmp/holdfast-services/rgw.env";

/** Connection settings of the real S3 test service (Ceph RGW). */
export interface RgwEnv {
  endpoint: string;
  bucket: string;
  region: string;
  forcePathStyle: boolean;
  accessKeyId: string;
  secretAccessKey: string;
}

/**
 * Reads the RGW settings from the environment, else from the env file. Throws (so every
 * test that needs RGW fails loudly, never skips) when neither names an endpoint.
 */
export function rgwEnv(): RgwEnv {
  const fromFile: Record<string, string> = {};
  if (existsSync(RGW_ENV_FILE)) {
    for (const line of readFileSync(RGW_ENV_FILE, "utf8").split("\n")) {
      const match = /^([A-Z0-9_]+)=(.*)$/.exec(line.trim());
      if (match) fromFile[match[1]!] = match[2]!;
    }
  }
  const read = (name: string) => process.env[name] ?? fromFile[name];
  const endpoint = read("HOLDFAST_S3_ENDPOINT");
  const bucket = read("HOLDFAST_S3_BUCKET");
  const accessKeyId = read("AWS_ACCESS_KEY_ID");
  const secretAccessKey = read("AWS_SECRET_ACCESS_KEY");
  if (!endpoint || !bucket || !accessKeyId || !secretAccessKey) {
    throw new Error(
      `the real S3 test service is not configured: no HOLDFAST_S3_ENDPOINT/HOLDFAST_S3_BUCKET/AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY in the environment or in ${RGW_ENV_FILE}. Start it with: bash tooling/services/rgw-start.sh`,
    );
  }
  return {
    endpoint,
    bucket,
    region: read("HOLDFAST_S3_REGION") ?? "us-east-1",
    forcePathStyle: (read("HOLDFAST_S3_PATH_STYLE") ?? "true") === "true",
    accessKeyId,
    secretAccessKey,
  };
}

/** Store options for RGW under a fresh prefix (`test-<12 ulid chars>`), optionally through another endpoint (a fault proxy). */
export function rgwOptions(overrides: Partial<S3StoreOptions> = {}): S3StoreOptions {
  const env = rgwEnv();
  return {
    bucket: env.bucket,
    // Short (18 bytes): the contract writes keys up to 25 bytes below S3's 1,024-byte limit.
    prefix: `test-${ulid().slice(-12)}`,
    region: env.region,
    endpoint: env.endpoint,
    forcePathStyle: env.forcePathStyle,
    credentials: { accessKeyId: env.accessKeyId, secretAccessKey: env.secretAccessKey },
    ...overrides,
  };
}
