import type { DatasetFormat } from "@holdfast/dataset";
import type { ProtocolContext, VersionRef } from "@holdfast/protocol";
import { createTag, listTags, type TagInfo, updateTag } from "@holdfast/refs-lifecycle";
import { Command } from "commander";
import { parseNameArg, parseVersionArg } from "../args.js";
import { ExitCode } from "../exit-codes.js";
import { openFormatDataset, parseFormatOption, withFormatOption } from "../format.js";
import { type CommandContext, type Handler, type Registrar, withStoreOptions } from "../program.js";
import { contextFor, openTarget, parseTarget } from "../target.js";
import { deleteRefCommand } from "./ref-delete.js";

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
    deleteRefCommand(r, "tag", "delete a tag (its version becomes eligible for cleanup)", [
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
      tagList,
    ),
  );
  tag.addHelpText(
    "after",
    "\nExamples:\n  $ holdfast tag create ./my-dataset v1.0 12\n  $ holdfast tag list ./my-dataset",
  );
  program.addCommand(tag);
}

/** `holdfast tag list`. */
async function tagList(
  [url]: readonly string[],
  opts: Record<string, unknown>,
  cx: CommandContext,
): Promise<number> {
  const t = parseTarget(url!, opts, cx.io);
  const forced = parseFormatOption(opts.format);
  const ctx = contextFor(await openTarget(t, cx.io, { readOnly: true }));
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

function tagShape(tag: TagInfo): { name: string; target: VersionRef } {
  return { name: tag.name, target: { branch: tag.target.branch, version: tag.target.version } };
}
