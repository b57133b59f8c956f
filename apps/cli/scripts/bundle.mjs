#!/usr/bin/env node
// The CLI as ONE JavaScript file that runs with no node_modules (the Python wheel ships it:
// python/README.md, "Cleanup from Python"). esbuild bundles src/bin.ts and every workspace
// package from its TypeScript source (the `@holdfast/source` export condition) with every
// npm dependency, into `<outdir>/holdfast.mjs`.
//
// Two things a single JS file cannot hold are handled here:
// - `readFileSync(new URL("<relative>", import.meta.url), "utf8")` (the CLI's package.json
//   for --version, format-lance's generated protobuf descriptors) is replaced at bundle time
//   by the file's text, so nothing is read beside the bundle;
// - the local backend's file locks are a native addon (fs-native-extensions, OFD locks on
//   Linux: docs/protocol.md R3). Its prebuilt binaries for Linux and macOS (x64, arm64) are
//   copied to `<outdir>/node_modules/fs-native-extensions/prebuilds/`, where the backend's
//   loader (packages/backends-local/src/locks.ts) finds them from the bundle's own URL.
//
// Usage: node scripts/bundle.mjs [--outdir DIR]   (default: apps/cli/bundle)
import { copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const here = dirname(fileURLToPath(import.meta.url));
const cliDir = resolve(here, "..");
const args = process.argv.slice(2);
const at = args.indexOf("--outdir");
const outdir = resolve(at >= 0 && args[at + 1] ? args[at + 1] : join(cliDir, "bundle"));
const PLATFORMS = ["linux-x64", "linux-arm64", "darwin-x64", "darwin-arm64"];
const READ_BESIDE =
  /readFileSync\(\s*new URL\(\s*"([^"]+)"\s*,\s*import\.meta\.url\s*\)\s*,\s*"utf8"\s*\)/g;

/** Inlines every `readFileSync(new URL("rel", import.meta.url), "utf8")` of the workspace's sources. */
const inlineReadsBeside = {
  name: "inline-reads-beside",
  setup(b) {
    b.onLoad({ filter: /[\\/](packages|apps)[\\/][^\\/]+[\\/]src[\\/].*\.ts$/ }, (args) => {
      const source = readFileSync(args.path, "utf8");
      if (!source.includes("import.meta.url")) return undefined;
      const contents = source.replace(READ_BESIDE, (_, rel) =>
        JSON.stringify(readFileSync(resolve(dirname(args.path), rel), "utf8")),
      );
      return { contents, loader: "ts" };
    });
  },
};

rmSync(outdir, { recursive: true, force: true });
mkdirSync(outdir, { recursive: true });
const result = await build({
  entryPoints: [join(cliDir, "src/bin.ts")],
  outfile: join(outdir, "holdfast.mjs"),
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node22",
  conditions: ["@holdfast/source"],
  // CommonJS dependencies call require() for Node's built-ins: give the ES module one.
  banner: {
    js: 'import { createRequire as __holdfastCreateRequire } from "node:module";\nconst require = __holdfastCreateRequire(import.meta.url);',
  },
  legalComments: "linked",
  logLevel: "warning",
  metafile: true,
  plugins: [inlineReadsBeside],
});
if (result.errors.length > 0) process.exit(1);

// The native lock addon's prebuilt binaries, where createRequire(bundle URL) resolves them.
const require = createRequire(
  join(cliDir, "..", "..", "packages", "backends-local", "package.json"),
);
const addonDir = dirname(require.resolve("fs-native-extensions/package.json"));
const addonOut = join(outdir, "node_modules", "fs-native-extensions");
const manifest = JSON.parse(readFileSync(join(addonDir, "package.json"), "utf8"));
mkdirSync(addonOut, { recursive: true });
writeFileSync(
  join(addonOut, "package.json"),
  `${JSON.stringify({ name: manifest.name, version: manifest.version, license: manifest.license }, null, 2)}\n`,
);
copyFileSync(join(addonDir, "LICENSE"), join(addonOut, "LICENSE"));
for (const platform of PLATFORMS) {
  const from = join(addonDir, "prebuilds", platform, "fs-native-extensions.node");
  mkdirSync(join(addonOut, "prebuilds", platform), { recursive: true });
  copyFileSync(from, join(addonOut, "prebuilds", platform, "fs-native-extensions.node"));
}
const bytes = Object.values(result.metafile.outputs).reduce((sum, o) => sum + o.bytes, 0);
process.stderr.write(`bundle: ${join(outdir, "holdfast.mjs")} (${bytes} bytes)\n`);
