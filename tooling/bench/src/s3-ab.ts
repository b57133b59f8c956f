// What the S3 A/B scripts share (s3-reads-ab.ts, s3-list-ab.ts): their arguments, output,
// the RGW from the environment and the options of the store under test. Imports nothing
// but types, so a child that loads it imports nothing but the store under test.
import type { ObjectStore } from "@holdfast/conditional-store";

export const arg = (name: string, fallback: string) => {
  const a = process.argv.find((x) => x.startsWith(`--${name}=`));
  return a ? a.slice(name.length + 3) : fallback;
};

export const out = (line: string) => process.stdout.write(`${line}\n`);

/** The RGW of tooling/services/rgw-start.sh, from the environment (source its rgw.env). */
export function rgwFromEnv() {
  const env = {
    endpoint: process.env.HOLDFAST_S3_ENDPOINT ?? "",
    bucket: process.env.HOLDFAST_S3_BUCKET ?? "",
    region: process.env.HOLDFAST_S3_REGION || "us-east-1",
    accessKeyId: process.env.AWS_ACCESS_KEY_ID ?? "",
    secretAccessKey: process.env.AWS_SECRET_ACCESS_KEY ?? "",
  };
  if (!env.endpoint) {
    throw new Error(
      "no RGW: source /tmp/holdfast-services/rgw.env (tooling/services/rgw-start.sh)",
    );
  }
  return env;
}

/** The backends-s3 module of one side (a git ref's source or this work tree's). */
export interface StoreModule {
  createS3Store(options: Record<string, unknown>): ObjectStore;
}

/** Options of a store under `prefix` of the RGW's bucket. */
export const storeOptions = (env: ReturnType<typeof rgwFromEnv>, prefix: string) => ({
  bucket: env.bucket,
  prefix,
  region: env.region,
  endpoint: env.endpoint,
  forcePathStyle: true,
  credentials: { accessKeyId: env.accessKeyId, secretAccessKey: env.secretAccessKey },
});
