import { readFile, stat } from "node:fs/promises";
import { resolve } from "node:path";
import { holdfastError } from "@holdfast/conditional-store";
import { commitVersion, type DataFile, writeDataFile } from "@holdfast/dataset";
import { requireWritableFormat } from "@holdfast/format-lance";
import { firstCommitParent } from "@holdfast/refs-lifecycle";
import { Command } from "commander";
import { parseNameArg } from "../args.js";
import { formatBytes } from "../duration.js";
import { openFormatDataset } from "../format.js";
import { type CommandContext, type Registrar, withStoreOptions } from "../program.js";
import { contextFor, openTarget, parseTarget } from "../target.js";

/** `commit`: writes data files and commits them as the next version of a branch. */
export function registerCommit(r: Registrar, program: Command): void {
  program.addCommand(
    r.leaf(
      withStoreOptions(
        new Command("commit")
          .description("write data files and commit them as the next version of a branch")
          .argument("<url>", "storage URL")
          .argument("<files...>", "local files to store in the new version")
          .option(
            "-b, --branch <name>",
            "branch to commit to (default: the dataset's default branch)",
          ),
      ),
      "commit",
      [
        "holdfast commit ./my-dataset part-0.parquet part-1.parquet",
        "holdfast commit ./my-dataset fix.csv --branch experiment",
        "holdfast commit s3://my-bucket/ds data.bin --json",
      ],
      commitCommand,
    ),
  );
}

/** `holdfast commit`. */
async function commitCommand(
  [url, ...paths]: readonly string[],
  opts: Record<string, unknown>,
  cx: CommandContext,
): Promise<number> {
  const target = parseTarget(url!, opts, cx.io);
  const branchFlag = opts.branch === undefined ? undefined : parseNameArg(opts.branch, "branch");
  // Read every file before touching the store: a bad path writes nothing.
  const local = await Promise.all(paths.map((p) => readLocalFile(cx.io.cwd, p)));
  const store = await openTarget(target, cx.io);
  const ctx = contextFor(store);
  // A Lance table is LanceDB's to write: refused before any data file is written.
  const { resolved, defaultBranch } = await openFormatDataset(ctx);
  requireWritableFormat(resolved, "commit");
  const branch = branchFlag ?? defaultBranch;
  // A fork's first version descends from the version its branch was created from.
  const parent = await firstCommitParent(ctx, { branch, defaultBranch });
  const files: (DataFile & { path: string })[] = [];
  for (const file of local) {
    const written = await writeDataFile(ctx, file.bytes);
    files.push({ path: file.path, ...written });
  }
  const commit = await commitVersion(ctx, {
    branch,
    files: files.map(({ key, size }) => ({ key, size })),
    ...(parent === undefined ? {} : { parent }),
  });
  cx.out.result(cx.command, {
    location: target.display,
    branch,
    version: commit.version,
    key: commit.key,
    txnId: commit.txnId,
    files,
  });
  const total = files.reduce((sum, f) => sum + f.size, 0);
  cx.out.line(
    `Committed version ${commit.version} on ${branch}: ${files.length} file(s), ${formatBytes(total)}.`,
  );
  return 0;
}

// --- utils ---

async function readLocalFile(
  cwd: string,
  path: string,
): Promise<{ path: string; bytes: Uint8Array }> {
  const full = resolve(cwd, path);
  const info = await stat(full).catch(() => null);
  if (!info) {
    throw holdfastError("invalid-input", "commit", `no such file: ${path}`, {
      hint: "commit takes paths of existing local files",
    });
  }
  if (!info.isFile()) {
    throw holdfastError("invalid-input", "commit", `not a regular file: ${path}`, {
      hint: "commit takes files, not directories",
    });
  }
  return { path, bytes: new Uint8Array(await readFile(full)) };
}
