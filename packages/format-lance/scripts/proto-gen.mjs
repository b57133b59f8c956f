// Generates src/generated/ from proto/lance-table.proto with protobufjs-cli (a pinned
// devDependency): a static decoder module (pbjs static-module, ES module on the
// protobufjs/minimal runtime), its type declarations (pbts) and the message descriptors as
// JSON (pbjs json; read for the wire-type check of proto.ts). Run with
// `pnpm --filter @holdfast/format-lance run proto:gen`; `node scripts/proto-gen.mjs <dir>`
// writes into <dir> instead (test/generated.test.ts compares the two).
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const pkg = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const out = resolve(process.argv[2] ?? join(pkg, "src/generated"));
const bin = (name) => join(pkg, "node_modules/.bin", name);
const proto = join(pkg, "proto/lance-table.proto");
const cli = JSON.parse(readFileSync(join(pkg, "node_modules/protobufjs-cli/package.json"), "utf8"));

const PBJS_STATIC = [
  "-t",
  "static-module",
  "-w",
  "es6",
  "--keep-case",
  "--no-create",
  "--no-encode",
  "--no-verify",
  "--no-convert",
  "--no-delimited",
  "--no-typeurl",
  "--no-service",
];
const header = (how) =>
  `// Generated from proto/lance-table.proto by protobufjs-cli ${cli.version} (${how}).\n` +
  "// Do not edit: regenerate with `pnpm --filter @holdfast/format-lance run proto:gen`.\n";

mkdirSync(out, { recursive: true });
const js = join(out, "lance-table.js");
const run = (name, args) => execFileSync(bin(name), args, { cwd: pkg, encoding: "utf8" });
writeFileSync(
  js,
  header(`pbjs ${PBJS_STATIC.join(" ")}`) +
    run("pbjs", [...PBJS_STATIC, "proto/lance-table.proto"]),
);
writeFileSync(join(out, "lance-table.d.ts"), header("pbts of lance-table.js") + run("pbts", [js]));
writeFileSync(
  join(out, "lance-table.json"),
  `${run("pbjs", ["-t", "json", "--keep-case", "proto/lance-table.proto"]).trim()}\n`,
);
void proto;
