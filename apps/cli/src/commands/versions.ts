import { listVersionsWithTags } from "@holdfast/refs-lifecycle";
import { Command } from "commander";
import { parseNameArg } from "../args.js";
import { openFormatDataset, parseFormatOption, withFormatOption } from "../format.js";
import { type CommandContext, type Registrar, withStoreOptions } from "../program.js";
import { contextFor, openTarget, parseTarget } from "../target.js";

/** `versions`: a branch's versions with the tags naming each. */
export function registerVersions(r: Registrar, program: Command): void {
  program.addCommand(
    r.leaf(
      withStoreOptions(
        withFormatOption(
          new Command("versions")
            .description("list the versions of a branch, oldest first")
            .argument("<url>", "storage URL")
            .option(
              "-b, --branch <name>",
              "branch to list (default: the dataset's default branch)",
            ),
        ),
      ),
      "versions",
      [
        "holdfast versions ./my-dataset",
        "holdfast versions ./my-dataset --branch experiment --json",
      ],
      versionsCommand,
    ),
  );
}

/** `holdfast versions`. */
async function versionsCommand(
  [url]: readonly string[],
  opts: Record<string, unknown>,
  cx: CommandContext,
): Promise<number> {
  const target = parseTarget(url!, opts, cx.io);
  const branchFlag = opts.branch === undefined ? undefined : parseNameArg(opts.branch, "branch");
  const forced = parseFormatOption(opts.format);
  const store = await openTarget(target, cx.io, { readOnly: true });
  const ctx = contextFor(store);
  const { resolved, defaultBranch } = await openFormatDataset(ctx, forced);
  const { format } = resolved;
  const branch = branchFlag ?? defaultBranch;
  const { versions } = await listVersionsWithTags(ctx, { format, branch });
  cx.out.result(cx.command, {
    location: target.display,
    format: resolved.name,
    branch,
    versions,
  });
  if (versions.length === 0) {
    cx.out.line(`Branch ${branch} has no versions.`);
  } else {
    cx.out.table(
      ["VERSION", "LAST MODIFIED (storage time)", "TAGS"],
      versions.map((v) => [String(v.version), v.lastModified, v.tags.join(", ")]),
    );
    cx.out.line(`${versions.length} version(s) on ${branch}.`);
  }
  return 0;
}
