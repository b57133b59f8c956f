import { holdfastError } from "@holdfast/conditional-store";
import type { CleanupOptions } from "./types.js";

/**
 * Checks every cleanup option before the first request, including the storage-time probe
 * (invariant 6): a wrong type, an invalid date, a non-positive or non-integer count or
 * bound is `invalid-input` naming the option, and nothing is sent.
 */
export function validateOptions(options: unknown): CleanupOptions {
  const bad = (why: string) =>
    holdfastError("invalid-input", "cleanup", `invalid cleanup option: ${why}`, {
      code: "INVALID_OPTION",
    });
  if (options === null || typeof options !== "object") throw bad("options is not an object");
  const o = options as Record<string, unknown>;
  const fn = (name: string) => {
    if (o[name] !== undefined && typeof o[name] !== "function") {
      throw bad(`${name} is not a function`);
    }
  };
  const bool = (name: string) => {
    if (o[name] !== undefined && typeof o[name] !== "boolean")
      throw bad(`${name} is not a boolean`);
  };
  const positiveInt = (name: string) => {
    const v = o[name];
    if (v !== undefined && !(typeof v === "number" && Number.isSafeInteger(v) && v >= 1)) {
      throw bad(`${name} ${String(v)} is not a positive integer`);
    }
  };
  for (const name of ["onProgress", "leaseCensus", "deleteLeases", "heartbeatSleep"]) {
    fn(name);
  }
  for (const name of ["concurrent", "waitForLock"]) bool(name);
  for (const name of [
    "concurrency",
    "deleteConcurrency",
    "ownershipBoundMs",
    "maxVersionsPerRecord",
  ]) {
    positiveInt(name);
  }
  const rate = o.maxDeletesPerSecond;
  if (rate !== undefined && !(typeof rate === "number" && Number.isFinite(rate) && rate > 0)) {
    throw bad(`maxDeletesPerSecond ${String(rate)} is not a positive number`);
  }
  const { storageNow, signal, format, spillDir, spillAboveVersions } = o;
  if (spillDir !== undefined && !(typeof spillDir === "string" && spillDir.length > 0)) {
    throw bad("spillDir is not a non-empty string");
  }
  if (
    spillAboveVersions !== undefined &&
    !(Number.isSafeInteger(spillAboveVersions) && (spillAboveVersions as number) >= 0)
  ) {
    throw bad(`spillAboveVersions ${String(spillAboveVersions)} is not a non-negative integer`);
  }
  if (
    storageNow !== undefined &&
    !(storageNow instanceof Date && Number.isFinite(storageNow.getTime()))
  ) {
    // An invalid date would turn every storage-time comparison false: no guard would hold.
    throw bad(`storageNow ${String(storageNow)} is not a valid Date`);
  }
  if (signal !== undefined && !(signal instanceof AbortSignal)) {
    throw bad("signal is not an AbortSignal");
  }
  if (format !== undefined) {
    const f = format as Record<string, unknown> | null;
    if (f === null || typeof f !== "object") throw bad("format is not an object");
    for (const method of [
      "listBranches",
      "listVersions",
      "readManifest",
      "manifestKey",
      "parseManifestKey",
      "isDataKey",
    ]) {
      if (typeof f[method] !== "function") throw bad(`format.${method} is not a function`);
    }
    // "" is valid (the whole root, filtered by isDataKey); a format whose files live under
    // several folders (Lance: data/, _deletions/, _indices/, _transactions/) names them.
    if (typeof f.dataPrefix !== "string") throw bad("format.dataPrefix is not a string");
    if (
      f.dataPrefixes !== undefined &&
      !(Array.isArray(f.dataPrefixes) && f.dataPrefixes.every((p) => typeof p === "string"))
    ) {
      throw bad("format.dataPrefixes is not a list of strings");
    }
  }
  return options as CleanupOptions;
}
