import { deleteBranch, deleteTag } from "@holdfast/refs-lifecycle";
import { Command } from "commander";
import { parseNameArg } from "../args.js";
import { ExitCode } from "../exit-codes.js";
import { openFormatDataset, parseFormatOption, withFormatOption } from "../format.js";
import { type Handler, type Registrar, withStoreOptions } from "../program.js";
import { contextFor, openTarget, parseTarget } from "../target.js";

/** `tag delete` / `branch delete`: one shape, one output, one exit path. */
export function deleteRefCommand(
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
    deleteRefHandler(kind),
  );
}

/** `tag delete` / `branch delete`: deletes the reference (a branch with its versions), idempotent for an interrupted deletion. */
function deleteRefHandler(kind: "tag" | "branch"): Handler {
  return async function deleteRef([url, nameText], opts, cx) {
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
  };
}
