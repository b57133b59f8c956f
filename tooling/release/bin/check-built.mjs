#!/usr/bin/env node
// Last step of every public package's `prepack`: refuses to pack (and so to publish) a
// package whose published manifest names a file that is not there, e.g. an unbuilt dist/.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";

const dir = process.cwd();
const manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
const exportsMap = manifest.publishConfig?.exports ?? manifest.exports ?? {};
const named = [
  ...Object.values(exportsMap).flatMap((entry) =>
    typeof entry === "string" ? [entry] : Object.values(entry),
  ),
  ...Object.values(manifest.bin ?? {}),
].filter((path) => typeof path === "string" && path.startsWith("./"));
const missing = [...new Set(named)].filter((path) => !existsSync(join(dir, path)));
if (missing.length > 0) {
  console.error(
    `${manifest.name}: refusing to pack, the manifest names files that do not exist: ${missing.join(", ")} (run the build first)`,
  );
  process.exit(1);
}
