// Test-only access to the fake-gcs-server started by tooling/services/gcs-start.sh. A missing
// or silent emulator fails the run with instructions: these tests never skip.
import { ulidIds } from "@holdfast/conditional-store";
import { type GcsEnv, gcsEnv } from "@holdfast/test-support";

/** The emulator's JSON API origin and test bucket. */
export type GcsEmulator = GcsEnv;

const START_HINT =
  "start it with `bash tooling/services/gcs-start.sh` (from the repository root), or set STORAGE_EMULATOR_HOST and HOLDFAST_GCS_BUCKET";

/** The emulator, from the environment or the env file gcs-start.sh writes (the shared test support). */
export function gcsEmulator(): GcsEmulator {
  return gcsEnv();
}

/** Fails with the start hint unless the emulator answers and the bucket exists. */
export async function ensureBucket(emulator: GcsEmulator): Promise<void> {
  let status: number;
  try {
    const answer = await fetch(`${emulator.endpoint}/storage/v1/b/${emulator.bucket}`);
    status = answer.status;
  } catch (error) {
    throw new Error(
      `fake-gcs-server at ${emulator.endpoint} did not answer (${String(error)}); ${START_HINT}`,
    );
  }
  if (status !== 200) {
    throw new Error(
      `bucket ${emulator.bucket} on ${emulator.endpoint} answered ${status}; ${START_HINT}`,
    );
  }
}

const ids = ulidIds();

/**
 * A fresh prefix per store, so tests never see each other's objects: short (`t-<label>-<12
 * ulid chars>`), since the contract's longest key leaves 25 of GCS's 1,024 name bytes.
 */
export function freshPrefix(label: string): string {
  return `t-${label}-${ids.next().slice(-12).toLowerCase()}`;
}
