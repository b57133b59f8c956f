import { initDataset } from "@holdfast/dataset";
import { Command } from "commander";
import { parseNameArg } from "../args.js";
import { type CommandContext, type Registrar, withStoreOptions } from "../program.js";
import { contextFor, openTarget, parseTarget } from "../target.js";

/** `init`: creates an empty dataset. */
export function registerInit(r: Registrar, program: Command): void {
  program.addCommand(
    r.leaf(
      withStoreOptions(
        new Command("init")
          .description("create an empty dataset at a storage URL")
          .argument("<url>", "storage URL")
          .option("--default-branch <name>", "name of the first branch", "main"),
      ),
      "init",
      [
        "holdfast init ./my-dataset",
        "holdfast init s3://my-bucket/datasets/events --region eu-west-1",
        "holdfast init s3://holdfast-test/ds --endpoint http://127.0.0.1:7480 --path-style",
        "AZURE_STORAGE_CONNECTION_STRING=... holdfast init az://my-container/ds",
      ],
      initCommand,
    ),
  );
}

/** `holdfast init`. */
async function initCommand(
  [url]: readonly string[],
  opts: Record<string, unknown>,
  cx: CommandContext,
): Promise<number> {
  const target = parseTarget(url!, opts, cx.io);
  const defaultBranch = parseNameArg(opts.defaultBranch, "branch");
  const store = await openTarget(target, cx.io, { create: true });
  const info = await initDataset(contextFor(store), { defaultBranch });
  cx.out.result(cx.command, {
    location: target.display,
    backend: store.backend,
    datasetId: info.datasetId,
    defaultBranch: info.defaultBranch,
  });
  cx.out.line(
    `Created dataset ${info.datasetId} at ${target.display} (default branch ${info.defaultBranch}).`,
  );
  cx.out.line(`Next: holdfast commit ${quote(url!)} <files...>`);
  return 0;
}

// --- utils ---

function quote(text: string): string {
  return /^[\w./:@-]+$/.test(text) ? text : JSON.stringify(text);
}
