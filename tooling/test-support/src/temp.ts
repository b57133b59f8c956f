import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createLocalStore } from "@holdfast/backends-local";
import type { ObjectStore } from "@holdfast/conditional-store";
import { commitVersion, initDataset, writeDataFile } from "@holdfast/dataset";
import { createContext, type ProtocolContext } from "@holdfast/protocol";

/** A temporary directory, removed by `dispose` (or `await using`). */
export interface TempDir extends AsyncDisposable {
  readonly dir: string;
  dispose(): Promise<void>;
}

/** Makes a fresh directory under the OS temp dir (`<prefix>XXXXXX`). */
export async function tempDir(prefix = "holdfast-test-"): Promise<TempDir> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  const dispose = () => rm(dir, { recursive: true, force: true });
  return { dir, dispose, [Symbol.asyncDispose]: dispose };
}

/** A holdfast dataset in a temporary directory, on the local backend. */
export interface TempDataset extends TempDir {
  /** The dataset's root (what the CLI takes as its URL). */
  readonly root: string;
  readonly store: ObjectStore;
  readonly ctx: ProtocolContext;
}

/**
 * Initialises a dataset in a fresh temporary directory and commits `versions` versions on
 * its default branch, each naming one small data file (`version <n>`).
 */
export async function tempDataset(
  options: { versions?: number; prefix?: string } = {},
): Promise<TempDataset> {
  const temp = await tempDir(options.prefix ?? "holdfast-dataset-");
  const root = join(temp.dir, "ds");
  const store = createLocalStore({ root, createRoot: true });
  const ctx = createContext(store);
  await initDataset(ctx);
  for (let i = 1; i <= (options.versions ?? 0); i++) {
    const file = await writeDataFile(ctx, new TextEncoder().encode(`version ${i}`));
    await commitVersion(ctx, { branch: "main", files: [file] });
  }
  return { ...temp, root, store, ctx };
}
