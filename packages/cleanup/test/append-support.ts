import type { ObjectStore } from "@holdfast/conditional-store";
import {
  type CommitResult,
  commitVersion,
  type DataFile,
  latestVersion,
  readManifest,
  writeDataFile,
} from "@holdfast/dataset";
import type { ProtocolContext } from "@holdfast/protocol";

/**
 * An appending writer (docs/protocol.md §2.5, rule H): reads the
 * latest manifest, writes one new file, commits the latest's files (copies: reused) plus
 * the new one, naming no sources.
 */
export async function append(ctx: ProtocolContext): Promise<CommitResult> {
  const latest = (await latestVersion(ctx, "main"))!;
  const { manifest } = await readManifest(ctx, "main", latest);
  const fresh = await writeDataFile(ctx, new TextEncoder().encode(`rows after ${latest}`));
  const files: DataFile[] = [...manifest.files.map((f) => ({ ...f })), fresh];
  return commitVersion(ctx, { branch: "main", files });
}

/** The data files the manifest of main@`version` names that no longer exist. */
export async function missingFiles(ctx: ProtocolContext, store: ObjectStore, version: number) {
  const { manifest } = await readManifest({ ...ctx, store }, "main", version);
  const missing: string[] = [];
  for (const f of manifest.files) if (!(await store.head(f.key))) missing.push(f.key);
  return missing;
}
