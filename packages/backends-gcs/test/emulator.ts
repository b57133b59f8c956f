// Test-only access to the fake-gcs-server started by tooling/services/gcs-start.sh. A missing
// or silent emulator fails the run with instructions: these tests never skip.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ulidIds } from "@holdfast/conditional-store";

export interface GcsEmulator {
  /** `http://127.0.0.1:<port>` of the JSON API (what a fault proxy forwards to). */
  endpoint: string;
  bucket: string;
}

const START_HINT =
  "start it with `bash tooling/services/gcs-start.sh` (from the repository root), or set STORAGE_EMULATOR_HOST and HOLDFAST_GCS_BUCKET";

/** Reads the emulator from the environment, else from the env file gcs-start.sh writes. */
export function gcsEmulator(): GcsEmulator {
  let endpoint = process.env.STORAGE_EMULATOR_HOST;
  let bucket = process.env.HOLDFAST_GCS_BUCKET;
  if (!endpoint) {
    const file = join(process.env.HOLDFAST_SERVICES_DIR ?? "/tmp/holdfast-services", "gcs.env");
    let text: string;
    try {
      text = readFileSync(file, "utf8");
    } catch {
      throw new Error(
        `fake-gcs-server is not configured: no STORAGE_EMULATOR_HOST and no ${file}; ${START_HINT}`,
      );
    }
    const vars = parseEnvFile(text);
    endpoint = vars.STORAGE_EMULATOR_HOST;
    bucket ??= vars.HOLDFAST_GCS_BUCKET;
    if (!endpoint) throw new Error(`${file} lacks STORAGE_EMULATOR_HOST; ${START_HINT}`);
  }
  return { endpoint: new URL(endpoint).origin, bucket: bucket || "holdfast-test" };
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

function parseEnvFile(text: string): Record<string, string> {
  const vars: Record<string, string> = {};
  for (const line of text.split("\n")) {
    const match = /^\s*([A-Za-z_][A-Za-z0-9_]*)=(.*)$/.exec(line);
    if (!match) continue;
    let value = match[2]!.trim();
    if (/^'.*'$|^".*"$/.test(value)) value = value.slice(1, -1);
    vars[match[1]!] = value;
  }
  return vars;
}
