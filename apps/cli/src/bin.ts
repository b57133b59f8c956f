#!/usr/bin/env node
import { enableCompileCache } from "./compile-cache.js";
import { CLI_VERSION, isVersionRequest } from "./version.js";

// Ctrl-C / SIGTERM: long-running commands (lease acquire --hold, cleanup) see the signal
// and release what they hold; a second Ctrl-C exits at once.
const interrupt = new AbortController();
let interrupted = 0;
const onSignal = (signal: NodeJS.Signals) => {
  interrupted += 1;
  if (interrupted > 1) process.exit(130);
  // Commands that hold something (lease --hold) release it; a cleanup stops at its next
  // safe point and gives up the retirement it has in flight (docs/operations.md).
  process.stderr.write(
    "holdfast: interrupted; stopping at the next safe point (press Ctrl-C again to exit at once)\n",
  );
  interrupt.abort(new Error(`interrupted by ${signal}`));
};
process.on("SIGINT", onSignal);
process.on("SIGTERM", onSignal);

// The AWS SDK warns on every start on a Node it will stop supporting: that is noise for a CLI
// user (holdfast pins a working SDK). Every other warning is still printed.
process.removeAllListeners("warning");
process.on("warning", (warning) => {
  if (`${warning.name} ${warning.message}`.includes("NodeVersionSupportWarning")) return;
  process.stderr.write(`(node) ${warning.name}: ${warning.message}\n`);
});

// `holdfast versions ... | head`: the reader went away; stop quietly as Unix tools do.
for (const stream of [process.stdout, process.stderr]) {
  stream.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code === "EPIPE") process.exit(process.exitCode ?? 0);
    throw error;
  });
}

const argv = process.argv.slice(2);
// Start-up time: `--version` alone is answered without loading any command module (they
// load the protocol packages and zod). Every other command loads only the module of the
// command it names (commands/registry.ts; all of them for the top-level help), and the
// backends (AWS and Azure SDKs) load only when a URL names them (target.ts).
if (isVersionRequest(argv)) {
  process.stdout.write(`${CLI_VERSION}\n`);
} else {
  // Node's module compile cache (a per-user cache folder; compile-cache.ts): the modules the
  // command loads from here on are compiled once, then read from the cache on later runs.
  enableCompileCache();
  const { main } = await import("./main.js");
  main(argv, {}, interrupt.signal).then(
    (code) => {
      process.exitCode = code;
    },
    (error: unknown) => {
      process.stderr.write(
        `holdfast: internal error: ${error instanceof Error ? error.stack : String(error)}\n`,
      );
      process.exitCode = 1;
    },
  );
}
