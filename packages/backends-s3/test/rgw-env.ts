import { rgwEnv } from "@holdfast/test-support";
import { ulid } from "ulid";
import type { S3StoreOptions } from "../src/index.js";

// The settings are read by the shared test support (its env file, then the environment).
export { type RgwEnv, rgwEnv } from "@holdfast/test-support";

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
