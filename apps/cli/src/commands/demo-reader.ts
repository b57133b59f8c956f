import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import {
  type DeleteOptions,
  holdfastError,
  type ListOptions,
  type ObjectStore,
  type PutOptions,
  type StoreCapabilities,
} from "@holdfast/conditional-store";
import type { CommandContext } from "../program.js";

/** The built CLI entry, spawned for the demo's reader process. */
export const BIN = fileURLToPath(new URL("../bin.js", import.meta.url));

/** One JSON line of `holdfast lease acquire --hold --read-every --json`. */
interface ReaderEvent {
  event?: string;
  ok?: boolean;
  lease?: { leaseId: string; version: number; expiresAt: string | null };
  reads?: number;
  error?: { kind: string; message: string };
}

export interface Reader {
  child: ChildProcess;
  lease: NonNullable<ReaderEvent["lease"]>;
  reads(): number;
  /** Resolves at the reader's next completed read (or after `timeoutMs`, or once it failed): false when no read came. */
  nextRead(timeoutMs: number): Promise<boolean>;
  failure(): string | undefined;
  /** Ctrl-C to the reader: it stops its keeper, releases the lease and exits. */
  stop(): Promise<number>;
}

/** Spawns `holdfast lease acquire --hold --read-every` and waits for its lease. */
export async function startReader(
  cx: CommandContext,
  dir: string,
  version: number,
): Promise<Reader> {
  const child = spawn(
    process.execPath,
    [
      BIN,
      "lease",
      "acquire",
      dir,
      String(version),
      "--ttl",
      "5s",
      "--renew-every",
      "1500ms",
      "--hold",
      "--read-every",
      "100ms",
      "--json",
    ],
    { cwd: cx.io.cwd, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, NO_COLOR: "1" } },
  );
  let reads = 0;
  let failure: string | undefined;
  const waiting = new Set<(read: boolean) => void>();
  const wake = (read: boolean) => {
    for (const resolve of waiting) resolve(read);
    waiting.clear();
  };
  let buffer = "";
  let stderr = "";
  const exited = new Promise<number>((resolve) =>
    child.on("exit", (code, signal) => resolve(code ?? (signal ? 128 : 1))),
  );
  const acquired = new Promise<NonNullable<ReaderEvent["lease"]>>((resolve, reject) => {
    const timer = setTimeout(
      () =>
        reject(
          holdfastError(
            "ambiguous",
            "demo",
            "the reader process did not acquire its lease within 20s",
          ),
        ),
      20_000,
    );
    child.stdout!.setEncoding("utf8");
    child.stdout!.on("data", (chunk: string) => {
      buffer += chunk;
      let newline = buffer.indexOf("\n");
      while (newline !== -1) {
        const line = buffer.slice(0, newline);
        buffer = buffer.slice(newline + 1);
        newline = buffer.indexOf("\n");
        let event: ReaderEvent;
        try {
          event = JSON.parse(line) as ReaderEvent;
        } catch {
          continue;
        }
        if (event.event === "acquired" && event.lease) {
          clearTimeout(timer);
          resolve(event.lease);
        } else if (event.event === "read" && typeof event.reads === "number") {
          reads = event.reads;
          wake(true);
        } else if (event.ok === false) {
          failure = event.error?.message ?? "the reader failed";
          wake(false);
          clearTimeout(timer);
          reject(holdfastError("refused", "demo", `reader process: ${failure}`));
        }
      }
    });
    child.stderr!.setEncoding("utf8");
    child.stderr!.on("data", (chunk: string) => {
      stderr += chunk;
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(
        holdfastError(
          "refused",
          "demo",
          `the reader process exited (code ${code}) before acquiring its lease: ${stderr.trim()}`,
        ),
      );
    });
  });
  let lease: NonNullable<ReaderEvent["lease"]>;
  try {
    lease = await acquired;
  } catch (error) {
    child.kill("SIGKILL");
    throw error;
  }
  let stopping: Promise<number> | undefined;
  return {
    child,
    lease,
    reads: () => reads,
    nextRead: (timeoutMs) => {
      if (failure !== undefined || child.exitCode !== null) return Promise.resolve(false);
      return new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => {
          waiting.delete(done);
          resolve(false);
        }, timeoutMs);
        const done = (read: boolean) => {
          clearTimeout(timer);
          resolve(read);
        };
        waiting.add(done);
      });
    },
    failure: () => failure,
    stop: () => {
      stopping ??= (async () => {
        if (child.exitCode === null && child.signalCode === null) child.kill("SIGINT");
        const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
        const code = await exited;
        clearTimeout(timer);
        return code;
      })();
      return stopping;
    },
  };
}

/**
 * The demo's store during its cleanup: before each batch delete it waits for one more read
 * of the reader process (at most the given wait), so the reader's reads interleave with the
 * deletions instead of all landing before or after a cleanup that is faster than the
 * reader's pause. Every request is otherwise passed through unchanged.
 */
export class ReadPacedStore implements ObjectStore {
  readonly backend: string;
  readonly location: string;
  readonly capabilities: StoreCapabilities;

  constructor(
    private readonly inner: ObjectStore,
    private readonly nextRead: () => Promise<boolean>,
  ) {
    this.backend = inner.backend;
    this.location = inner.location;
    this.capabilities = inner.capabilities;
  }

  get(key: string, options?: { signal?: AbortSignal | undefined }) {
    return this.inner.get(key, options);
  }

  head(key: string, options?: { signal?: AbortSignal | undefined }) {
    return this.inner.head(key, options);
  }

  put(key: string, body: Uint8Array, options?: PutOptions) {
    return this.inner.put(key, body, options);
  }

  delete(key: string, options?: DeleteOptions) {
    return this.inner.delete(key, options);
  }

  async deleteMany(keys: readonly string[], options?: { signal?: AbortSignal | undefined }) {
    await this.nextRead();
    return this.inner.deleteMany(keys, options);
  }

  list(prefix: string, options?: ListOptions) {
    return this.inner.list(prefix, options);
  }
}
