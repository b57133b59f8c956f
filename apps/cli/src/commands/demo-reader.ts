import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { holdfastError } from "@holdfast/conditional-store";
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
      "200ms",
      "--json",
    ],
    { cwd: cx.io.cwd, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, NO_COLOR: "1" } },
  );
  let reads = 0;
  let failure: string | undefined;
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
        } else if (event.ok === false) {
          failure = event.error?.message ?? "the reader failed";
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
