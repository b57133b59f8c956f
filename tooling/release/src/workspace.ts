// The workspace's public (published) packages, read from their manifests.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** Root of the holdfast workspace. */
export const WORKSPACE_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");

/** The fields of a package manifest the release checks read. */
export interface Manifest {
  name: string;
  version: string;
  private?: boolean;
  exports?: Record<string, Record<string, string>>;
  publishConfig?: { exports?: Record<string, Record<string, string>> };
  bin?: Record<string, string>;
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
  scripts?: Record<string, string>;
  engines?: { node?: string };
  [field: string]: unknown;
}

/** One published package of the workspace. */
export interface PublicPackage {
  /** e.g. `@holdfast/conditional-store` */
  name: string;
  /** Folder relative to the workspace root, e.g. `packages/conditional-store`. */
  dir: string;
  /** Short name used for report files, e.g. `conditional-store`. */
  short: string;
  manifest: Manifest;
}

/** Every package under packages/ and apps/ that is not private, sorted by folder. */
export function publicPackages(root = WORKSPACE_ROOT): PublicPackage[] {
  return ["packages", "apps"]
    .flatMap((group) =>
      readdirSync(join(root, group))
        .map((name) => `${group}/${name}`)
        .filter((dir) => existsSync(join(root, dir, "package.json"))),
    )
    .sort()
    .map((dir) => ({ dir, manifest: readManifest(join(root, dir)) }))
    .filter(({ manifest }) => manifest.private !== true)
    .map(({ dir, manifest }) => ({
      name: manifest.name,
      dir,
      short: manifest.name.replace(/^@holdfast\//, ""),
      manifest,
    }));
}

/** The parsed package.json of a folder. */
export function readManifest(dir: string): Manifest {
  return JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as Manifest;
}

/** The subpaths a package exports (`.`, `./testing`) with their published `types` entry. */
export function publishedEntries(pkg: PublicPackage): { subpath: string; types: string }[] {
  const exports = pkg.manifest.publishConfig?.exports ?? pkg.manifest.exports ?? {};
  return Object.entries(exports).map(([subpath, conditions]) => {
    const types = conditions.types;
    if (types === undefined) throw new Error(`${pkg.name}: export ${subpath} has no types`);
    return { subpath, types };
  });
}

/** Names of every private workspace package (tooling, examples, private apps). */
export function privatePackageNames(root = WORKSPACE_ROOT): Set<string> {
  return new Set(
    ["packages", "apps", "tooling", "examples"]
      .flatMap((group) =>
        existsSync(join(root, group))
          ? readdirSync(join(root, group)).map((name) => join(root, group, name))
          : [],
      )
      .filter((dir) => existsSync(join(dir, "package.json")))
      .map((dir) => readManifest(dir))
      .filter((manifest) => manifest.private === true)
      .map((manifest) => manifest.name),
  );
}
