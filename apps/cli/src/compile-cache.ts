import * as nodeModule from "node:module";
import { homedir } from "node:os";
import { join } from "node:path";

/**
 * The folder for Node's module compile cache: `$XDG_CACHE_HOME/holdfast/node-compile-cache`
 * (else `~/.cache/...`). Node keeps one subfolder per Node version and build in it, and a
 * `NODE_COMPILE_CACHE` the user set wins over it; undefined when there is no home to put it
 * in (Node then uses its default under the temp folder).
 */
export function compileCacheDir(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const base = env.XDG_CACHE_HOME || (env.HOME ? join(env.HOME, ".cache") : safeHomedir());
  return base ? join(base, "holdfast", "node-compile-cache") : undefined;
}

function safeHomedir(): string | undefined {
  try {
    return homedir() || undefined;
  } catch {
    return undefined;
  }
}

/**
 * Enables Node's module compile cache (Node 22.1+) for the modules the CLI loads after this
 * call: a later run reads their compiled code instead of compiling it again. On a runtime
 * without it, or when the folder cannot be written, nothing changes but the time it takes;
 * `NODE_DISABLE_COMPILE_CACHE=1` turns it off. Returns Node's status name, for tests.
 */
export function enableCompileCache(env: NodeJS.ProcessEnv = process.env): string {
  // Read through the namespace at run time: older runtimes have no such export.
  const enable = (nodeModule as { enableCompileCache?: typeof nodeModule.enableCompileCache })
    .enableCompileCache;
  if (typeof enable !== "function") return "UNSUPPORTED";
  // Node reports a folder it cannot create or write as status FAILED; it does not throw.
  const result = enable(compileCacheDir(env));
  const names = Object.entries(nodeModule.constants?.compileCacheStatus ?? {});
  return names.find(([, value]) => value === result.status)?.[0] ?? String(result.status);
}
