import { holdfastError } from "@holdfast/conditional-store";
import type { ProtocolContext, VersionRef } from "@holdfast/dataset";

/** The parent a branch's first commit descends from (its creation point). */
export async function branchParentForFirstCommit(
  _ctx: ProtocolContext,
  branch: string,
): Promise<VersionRef> {
  throw holdfastError("not-found", "commit", `branch ${branch} does not exist`, {
    hint: `create it first: holdfast branch create <url> ${branch} --from <branch>@<version>`,
  });
}
