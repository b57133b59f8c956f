import { describeBranches, resolveForkPoint } from "@holdfast/format-lance";
import type { VersionRef } from "@holdfast/protocol";
import { type BranchInfo, createBranch } from "@holdfast/refs-lifecycle";
import { Command } from "commander";
import { parseForkPoint, parseNameArg } from "../args.js";
import { ExitCode } from "../exit-codes.js";
import { openFormatDataset, parseFormatOption, withFormatOption } from "../format.js";
import { type CommandContext, type Registrar, withStoreOptions } from "../program.js";
import { contextFor, openTarget, parseTarget } from "../target.js";
import { deleteRefCommand } from "./ref-delete.js";

/** `branch create|delete|list`: lines of versions forked from a version. */
export function registerBranch(r: Registrar, program: Command): void {
  const branch = new Command("branch").description(
    "fork lines of versions; a branch keeps the versions its lineage needs",
  );

  branch.addCommand(
    r.leaf(
      withStoreOptions(
        withFormatOption(
          new Command("create")
            .description(
              "create a branch forked from a version (a Lance table's branches are LanceDB's)",
            )
            .argument("<url>", "storage URL")
            .argument("<name>", "branch name: letters, digits, . _ - (one path segment)")
            .option(
              "--from <ref>",
              "fork point: <version> or <branch>@<version> (default: the latest version of the default branch)",
            ),
        ),
      ),
      "branch create",
      [
        "holdfast branch create ./my-dataset experiment --from 12",
        "holdfast branch create ./my-dataset hotfix --from experiment@3",
        "holdfast commit ./my-dataset data.bin --branch experiment   # then commit to it",
      ],
      branchCreate,
    ),
  );

  branch.addCommand(
    deleteRefCommand(
      r,
      "branch",
      "delete a branch with its versions, leases and retirement state (refused while others depend on it or readers hold leases on it)",
      ["holdfast branch delete ./my-dataset experiment"],
    ),
  );

  branch.addCommand(
    r.leaf(
      withStoreOptions(
        withFormatOption(
          new Command("list")
            .description("list branches with their fork point and latest version")
            .argument("<url>", "storage URL"),
        ),
      ),
      "branch list",
      ["holdfast branch list ./my-dataset", "holdfast branch list ./my-dataset --json"],
      branchList,
    ),
  );
  branch.addHelpText(
    "after",
    "\nExamples:\n  $ holdfast branch create ./my-dataset experiment --from 12\n  $ holdfast branch list ./my-dataset",
  );
  program.addCommand(branch);
}

/** `holdfast branch create`. */
async function branchCreate(
  [url, nameText]: readonly string[],
  opts: Record<string, unknown>,
  cx: CommandContext,
): Promise<number> {
  const t = parseTarget(url!, opts, cx.io);
  const name = parseNameArg(nameText, "branch");
  // Parse the fork point before opening anything (its default branch is resolved later).
  const fromParsed = opts.from === undefined ? undefined : parseForkPoint(String(opts.from));
  const forced = parseFormatOption(opts.format);
  const ctx = contextFor(await openTarget(t, cx.io));
  const { resolved, defaultBranch } = await openFormatDataset(ctx, forced);
  const { format } = resolved;
  // The default fork point (the default branch's latest) is the format package's rule.
  const parent = await resolveForkPoint(ctx, { format, defaultBranch, from: fromParsed });
  const created = await createBranch(ctx, { name, parent }, { format });
  cx.out.result(cx.command, { location: t.display, branch: branchShape(created) });
  cx.out.line(`Created branch ${created.name} from ${parent.branch}@${parent.version}.`);
  return ExitCode.ok;
}

/** `holdfast branch list`. */
async function branchList(
  [url]: readonly string[],
  opts: Record<string, unknown>,
  cx: CommandContext,
): Promise<number> {
  const t = parseTarget(url!, opts, cx.io);
  const forced = parseFormatOption(opts.format);
  const ctx = contextFor(await openTarget(t, cx.io, { readOnly: true }));
  const { resolved, defaultBranch } = await openFormatDataset(ctx, forced);
  const branches = await describeBranches(ctx, { format: resolved.format, defaultBranch });
  cx.out.result(cx.command, { location: t.display, branches });
  cx.out.table(
    ["BRANCH", "FORKED FROM", "LATEST VERSION"],
    branches.map((b) => [
      b.default ? `${b.name} (default)` : b.name,
      b.parent ? `${b.parent.branch}@${b.parent.version}` : "-",
      b.latestVersion === null ? "-" : String(b.latestVersion),
    ]),
  );
  return ExitCode.ok;
}

// --- utils ---

function branchShape(b: BranchInfo): {
  name: string;
  parent: VersionRef | null;
  metadata: Record<string, string>;
} {
  return { name: b.name, parent: b.parent, metadata: b.metadata };
}
