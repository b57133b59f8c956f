import { holdfastError } from "@holdfast/conditional-store";
import { type DatasetFormat, latestVersion } from "@holdfast/dataset";
import type { ProtocolContext, VersionRef } from "@holdfast/protocol";
import { getBranch } from "./branches.js";
import { holdfastFormat } from "./formats.js";
import { listTags } from "./tags.js";

/** One version of a branch with the tags that name it (the `versions` document's rows). */
export type TaggedVersion = {
  version: number;
  key: string;
  lastModified: string;
  size: number;
  tags: string[];
};

/**
 * A branch's versions, oldest first, each with the tags naming it, read through the
 * dataset's format (a Lance table's manifests and tags are Lance's). With `after`, only
 * versions numbered above it; with `limit`, at most that many, `nextAfter` then being the
 * page's last version when more may follow (else null). Tags are listed once.
 */
export async function listVersionsWithTags(
  ctx: ProtocolContext,
  options: {
    readonly format: DatasetFormat;
    readonly branch: string;
    readonly after?: number | undefined;
    readonly limit?: number | undefined;
  },
): Promise<{ versions: TaggedVersion[]; nextAfter: number | null }> {
  const { format, branch, after, limit } = options;
  const tagsByVersion = new Map<number, string[]>();
  for (const tag of await listTags(ctx, { format })) {
    if (tag.target.branch !== branch) continue;
    tagsByVersion.set(tag.target.version, [
      ...(tagsByVersion.get(tag.target.version) ?? []),
      tag.name,
    ]);
  }
  const versions: TaggedVersion[] = [];
  let more = false;
  for await (const entry of format.listVersions(ctx, branch)) {
    if (after !== undefined && entry.version <= after) continue;
    if (versions.length === limit) {
      more = true;
      break;
    }
    versions.push({
      version: entry.version,
      key: entry.key,
      lastModified: entry.lastModified.toISOString(),
      size: entry.size,
      tags: tagsByVersion.get(entry.version) ?? [],
    });
  }
  return { versions, nextAfter: more ? (versions.at(-1)?.version ?? null) : null };
}

/**
 * The parent of a commit to `branch` that names none (the fork rule of a first commit):
 * undefined on the default branch or once the branch has versions (the commit then
 * descends from the branch's latest); before that, the version the branch was forked from,
 * so a fork's first version keeps its lineage (invariant 2). A branch other than the
 * default without a reference is `not-found` (BRANCH_NOT_FOUND): nothing is written.
 */
export async function firstCommitParent(
  ctx: ProtocolContext,
  options: { readonly branch: string; readonly defaultBranch: string },
): Promise<VersionRef | null | undefined> {
  const { branch, defaultBranch } = options;
  if (branch === defaultBranch) return undefined;
  if ((await latestVersion(ctx, branch)) !== null) return undefined;
  // Commits are holdfast's layout only (a Lance table is refused before this, FORMAT_READ_ONLY).
  const info = await getBranch(ctx, branch, { format: holdfastFormat });
  if (!info) {
    throw holdfastError("not-found", "commit", `branch ${branch} does not exist`, {
      code: "BRANCH_NOT_FOUND",
      hint: "create it first (holdfast branch create, or POST .../branches) from a version",
    });
  }
  return info.parent;
}
