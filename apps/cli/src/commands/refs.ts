import { holdfastError } from "@holdfast/conditional-store";
import type { DatasetFormat, ProtocolContext, VersionRef } from "@holdfast/dataset";
import { describeBranches } from "@holdfast/format-lance";
import {
  type BranchInfo,
  createBranch,
  createTag,
  deleteBranch,
  deleteTag,
  listTags,
  type TagInfo,
  updateTag,
} from "@holdfast/refs-lifecycle";
import { Command } from "commander";
import { parseForkPoint, parseNameArg, parseVersionArg } from "../args.js";
import { ExitCode } from "../exit-codes.js";
import { openFormatDataset, parseFormatOption, withFormatOption } from "../format.js";
import { type Handler, type Registrar, withStoreOptions } from "../program.js";
import { contextFor, openTarget, parseTarget } from "../target.js";

/** `tag create|update|delete|list`: names that keep a version for good. */
export function registerTag(r: Registrar, program: Command): void {
  const tag = new Command("tag").description("name versions; a tagged version is never cleaned up");
  const target = (cmd: Command) =>
    withFormatOption(
      cmd.option(
        "-b, --branch <name>",
        "branch of the version (default: the dataset's default branch; main on a Lance table)",
      ),
    );

  tag.addCommand(
    r.leaf(
      withStoreOptions(
        target(
          new Command("create")
            .description("create a tag on a version (fails if the tag exists)")
            .argument("<url>", "storage URL")
            .argument("<name>", "tag name: letters, digits, . _ - (one path segment)")
            .argument("<version>", "version number"),
        ),
      ),
      "tag create",
      [
        "holdfast tag create ./my-dataset v1.0 12",
        "holdfast tag create ./my-dataset nightly 3 --branch exp --json",
      ],
      writeTagHandler(
        createTag,
        (tag) => `Tagged ${tag.target.branch}@${tag.target.version} as ${tag.name}.`,
      ),
    ),
  );

  tag.addCommand(
    r.leaf(
      withStoreOptions(
        target(
          new Command("update")
            .description("move an existing tag to another version")
            .argument("<url>", "storage URL")
            .argument("<name>", "tag name")
            .argument("<version>", "new version number"),
        ),
      ),
      "tag update",
      ["holdfast tag update ./my-dataset stable 14"],
      writeTagHandler(
        updateTag,
        (tag) => `Moved tag ${tag.name} to ${tag.target.branch}@${tag.target.version}.`,
      ),
    ),
  );

  tag.addCommand(
    deleteCommand(r, "tag", "delete a tag (its version becomes eligible for cleanup)", [
      "holdfast tag delete ./my-dataset nightly",
    ]),
  );

  tag.addCommand(
    r.leaf(
      withStoreOptions(
        withFormatOption(
          new Command("list")
            .description("list tags (a Lance table's are Lance's own)")
            .argument("<url>", "storage URL"),
        ),
      ),
      "tag list",
      ["holdfast tag list ./my-dataset", "holdfast tag list s3://bucket/ds --json"],
      async ([url], opts, cx) => {
        const t = parseTarget(url!, opts, cx.io);
        const forced = parseFormatOption(opts.format);
        const ctx = contextFor(await openTarget(t, cx.io));
        const { resolved } = await openFormatDataset(ctx, forced);
        const tags = (await listTags(ctx, { format: resolved.format })).map(tagShape);
        cx.out.result(cx.command, { location: t.display, tags });
        if (tags.length === 0) cx.out.line("No tags.");
        else
          cx.out.table(
            ["TAG", "VERSION"],
            tags.map((x) => [x.name, `${x.target.branch}@${x.target.version}`]),
          );
        return ExitCode.ok;
      },
    ),
  );
  tag.addHelpText(
    "after",
    "\nExamples:\n  $ holdfast tag create ./my-dataset v1.0 12\n  $ holdfast tag list ./my-dataset",
  );
  program.addCommand(tag);
}

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
      async ([url, nameText], opts, cx) => {
        const t = parseTarget(url!, opts, cx.io);
        const name = parseNameArg(nameText, "branch");
        // Parse the fork point before opening anything (its default branch is resolved later).
        const fromParsed = opts.from === undefined ? undefined : parseForkPoint(String(opts.from));
        const forced = parseFormatOption(opts.format);
        const ctx = contextFor(await openTarget(t, cx.io));
        const { resolved, defaultBranch } = await openFormatDataset(ctx, forced);
        const { format } = resolved;
        let parent: VersionRef;
        if (fromParsed === undefined) {
          const latest = await format.latestVersion(ctx, defaultBranch);
          if (latest === null) {
            throw holdfastError(
              "not-found",
              "createBranch",
              `branch ${defaultBranch} has no versions to fork from`,
              {
                hint: "commit a version first, or pass --from <branch>@<version>",
              },
            );
          }
          parent = { branch: defaultBranch, version: latest };
        } else {
          parent = {
            branch: fromParsed.branch ?? defaultBranch,
            version: fromParsed.version,
          };
        }
        const created = await createBranch(ctx, { name, parent }, { format });
        cx.out.result(cx.command, { location: t.display, branch: branchShape(created) });
        cx.out.line(`Created branch ${created.name} from ${parent.branch}@${parent.version}.`);
        return ExitCode.ok;
      },
    ),
  );

  branch.addCommand(
    deleteCommand(
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
      async ([url], opts, cx) => {
        const t = parseTarget(url!, opts, cx.io);
        const forced = parseFormatOption(opts.format);
        const ctx = contextFor(await openTarget(t, cx.io));
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
      },
    ),
  );
  branch.addHelpText(
    "after",
    "\nExamples:\n  $ holdfast branch create ./my-dataset experiment --from 12\n  $ holdfast branch list ./my-dataset",
  );
  program.addCommand(branch);
}

// --- utils ---

/** `tag create` / `tag update`: parse, write through `write`, print the tag. */
function writeTagHandler(
  write: (
    ctx: ProtocolContext,
    input: { name: string; target: VersionRef },
    options: { format: DatasetFormat },
  ) => Promise<TagInfo>,
  message: (tag: TagInfo) => string,
): Handler {
  return async ([url, nameText, versionText], opts, cx) => {
    const t = parseTarget(url!, opts, cx.io);
    const name = parseNameArg(nameText, "tag");
    const version = parseVersionArg(versionText);
    const branchFlag = opts.branch === undefined ? undefined : parseNameArg(opts.branch, "branch");
    const forced = parseFormatOption(opts.format);
    const ctx = contextFor(await openTarget(t, cx.io));
    const { resolved, defaultBranch } = await openFormatDataset(ctx, forced);
    const tag = await write(
      ctx,
      { name, target: { branch: branchFlag ?? defaultBranch, version } },
      { format: resolved.format },
    );
    cx.out.result(cx.command, {
      location: t.display,
      format: resolved.name,
      tag: tagShape(tag),
    });
    cx.out.line(message(tag));
    return ExitCode.ok;
  };
}

/** `tag delete` / `branch delete`: one shape, one output, one exit path. */
function deleteCommand(
  r: Registrar,
  kind: "tag" | "branch",
  description: string,
  examples: string[],
): Command {
  return r.leaf(
    withStoreOptions(
      withFormatOption(
        kind === "branch"
          ? new Command("delete")
              .description(description)
              .argument("<url>", "storage URL")
              .argument("<name>", `${kind} name`)
              .option(
                "--force",
                "delete even while readers hold active leases on its versions (they vanish under them); without it the deletion is refused",
              )
          : new Command("delete")
              .description(description)
              .argument("<url>", "storage URL")
              .argument("<name>", `${kind} name`),
      ),
    ),
    `${kind} delete`,
    examples,
    async ([url, nameText], opts, cx) => {
      const t = parseTarget(url!, opts, cx.io);
      const name = parseNameArg(nameText, kind);
      const forced = parseFormatOption(opts.format);
      const ctx = contextFor(await openTarget(t, cx.io));
      const { format } = (await openFormatDataset(ctx, forced)).resolved;
      const result =
        kind === "tag"
          ? await deleteTag(ctx, name, { format })
          : await deleteBranch(ctx, name, { force: opts.force === true, format });
      cx.out.result(cx.command, {
        location: t.display,
        deleted: { name: result.name, resumed: result.resumed },
      });
      cx.out.line(
        `Deleted ${kind} ${result.name}${result.resumed ? " (finished an interrupted deletion)" : ""}.`,
      );
      return ExitCode.ok;
    },
  );
}

function tagShape(tag: TagInfo): { name: string; target: VersionRef } {
  return { name: tag.name, target: { branch: tag.target.branch, version: tag.target.version } };
}

function branchShape(b: BranchInfo): {
  name: string;
  parent: VersionRef | null;
  metadata: Record<string, string>;
} {
  return { name: b.name, parent: b.parent, metadata: b.metadata };
}
