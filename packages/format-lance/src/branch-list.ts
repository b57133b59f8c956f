import { holdfastError } from "@holdfast/conditional-store";
import type { DatasetFormat } from "@holdfast/dataset";
import type { ProtocolContext, VersionRef } from "@holdfast/protocol";
import { listBranches } from "@holdfast/refs-lifecycle";

/** One row of a branch listing (the CLI's `branch list`, the HTTP API's `GET .../branches`). */
export type BranchView = {
  name: string;
  /** The version it was forked from; null for the default branch. */
  parent: VersionRef | null;
  /** The branch reference's metadata; absent for the default branch, which has no reference. */
  metadata?: Record<string, string>;
  default: boolean;
  latestVersion: number | null;
};

/**
 * Every branch of a dataset of either format, the default one first: each with its fork
 * point and latest version (a Lance branch's versions are in its own
 * `tree/{name}/_versions/`).
 */
export async function describeBranches(
  ctx: ProtocolContext,
  options: { readonly format: DatasetFormat; readonly defaultBranch: string },
): Promise<BranchView[]> {
  const { format, defaultBranch } = options;
  const refs = await listBranches(ctx, { format });
  return [
    {
      name: defaultBranch,
      parent: null,
      default: true,
      latestVersion: await format.latestVersion(ctx, defaultBranch),
    },
    ...(await Promise.all(
      refs
        .filter((b) => b.name !== defaultBranch)
        .map(async (b) => ({
          name: b.name,
          parent: b.parent,
          metadata: b.metadata,
          default: false,
          latestVersion: await format.latestVersion(ctx, b.name),
        })),
    )),
  ];
}

/**
 * The version a new branch forks from: `from` (its branch defaulting to the default
 * branch), else the default branch's latest version. A default branch without versions is
 * `not-found`: nothing is written.
 */
export async function resolveForkPoint(
  ctx: ProtocolContext,
  options: {
    readonly format: DatasetFormat;
    readonly defaultBranch: string;
    readonly from?: { readonly branch?: string | undefined; readonly version: number } | undefined;
  },
): Promise<VersionRef> {
  const { format, defaultBranch, from } = options;
  if (from !== undefined) return { branch: from.branch ?? defaultBranch, version: from.version };
  const latest = await format.latestVersion(ctx, defaultBranch);
  if (latest === null) {
    throw holdfastError(
      "not-found",
      "createBranch",
      `branch ${defaultBranch} has no versions to fork from`,
      { hint: "commit a version first, or name the version to fork from (--from, or from)" },
    );
  }
  return { branch: defaultBranch, version: latest };
}
