import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { createLocalStore } from "@holdfast/backends-local";
import { type HoldfastError, isHoldfastError, listAll } from "@holdfast/conditional-store";
import { afterAll, afterEach, describe, expect, it } from "vitest";

const here = dirname(fileURLToPath(import.meta.url));
const packageDir = dirname(here);
const childScript = join(here, "fixtures", "race-child.ts");
const base = mkdtempSync(join(tmpdir(), "holdfast-local-mp-"));
let n = 0;
const freshRoot = () => {
  n += 1;
  return join(base, `root-${n}`);
};

const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill("SIGKILL");
});
afterAll(() => rmSync(base, { recursive: true, force: true }));

/**
 * Starts a child store process over `root` and waits until it is listening. With
 * --expose-gc: a lock holder collects garbage before it reports its lock taken, so a lock
 * that a collection would drop is gone before the test relies on it, every time.
 */
async function startChild(root: string, id: number): Promise<ChildProcess> {
  const child = spawn(
    process.execPath,
    [
      "--expose-gc",
      "--import",
      "tsx",
      "--conditions=@holdfast/source",
      childScript,
      root,
      String(id),
    ],
    { cwd: packageDir, stdio: ["ignore", "inherit", "inherit", "ipc"] },
  );
  children.push(child);
  await nextMessage(child);
  return child;
}

function nextMessage<T = Record<string, unknown>>(child: ChildProcess): Promise<T> {
  return new Promise((resolve, reject) => {
    const onMessage = (message: T) => {
      child.off("exit", onExit);
      resolve(message);
    };
    const onExit = (code: number | null) => {
      child.off("message", onMessage);
      reject(new Error(`child exited (${code}) before answering`));
    };
    child.once("message", onMessage);
    child.once("exit", onExit);
  });
}

interface RoundReply {
  round: number;
  outcomes: { won: boolean; etag?: string; body?: string; kind?: string }[];
}

const PROCESSES = 4;
const RACERS_PER_PROCESS = 2;
const ROUNDS = 12;

describe("local store across processes", () => {
  it("create-only races between 4 processes have exactly one winner every round", async () => {
    const root = freshRoot();
    const store = createLocalStore({ root });
    const procs = await Promise.all(
      Array.from({ length: PROCESSES }, (_, i) => startChild(root, i)),
    );
    for (let round = 0; round < ROUNDS; round += 1) {
      const key = `race/create/${round}`;
      const replies = await Promise.all(
        procs.map((child) => {
          const reply = nextMessage<RoundReply>(child);
          child.send({ op: "create", round, key, racers: RACERS_PER_PROCESS });
          return reply;
        }),
      );
      const outcomes = replies.flatMap((r) => r.outcomes);
      const winners = outcomes.filter((o) => o.won);
      expect({ round, winners: winners.length }).toEqual({ round, winners: 1 });
      expect(outcomes.filter((o) => !o.won).map((o) => o.kind)).toEqual(
        Array(PROCESSES * RACERS_PER_PROCESS - 1).fill("conflict"),
      );
      const stored = await store.get(key);
      expect(new TextDecoder().decode(stored!.body)).toBe(winners[0]!.body);
      expect(stored!.etag).toBe(winners[0]!.etag);
    }
  }, 60_000);

  it("compare-and-swap races between 4 processes have exactly one winner every round", async () => {
    const root = freshRoot();
    const store = createLocalStore({ root });
    const procs = await Promise.all(
      Array.from({ length: PROCESSES }, (_, i) => startChild(root, i)),
    );
    const key = "race/cas";
    for (let round = 0; round < ROUNDS; round += 1) {
      const { etag } = await store.put(key, new TextEncoder().encode(`base ${round}`));
      const replies = await Promise.all(
        procs.map((child) => {
          const reply = nextMessage<RoundReply>(child);
          child.send({ op: "cas", round, key, etag, racers: RACERS_PER_PROCESS });
          return reply;
        }),
      );
      const outcomes = replies.flatMap((r) => r.outcomes);
      const winners = outcomes.filter((o) => o.won);
      expect({ round, winners: winners.length }).toEqual({ round, winners: 1 });
      expect(outcomes.filter((o) => !o.won).map((o) => o.kind)).toEqual(
        Array(PROCESSES * RACERS_PER_PROCESS - 1).fill("conflict"),
      );
      const stored = await store.get(key);
      expect(new TextDecoder().decode(stored!.body)).toBe(winners[0]!.body);
      expect(stored!.etag).toBe(winners[0]!.etag);
    }
  }, 60_000);

  it("R3 local compare-and-swap cannot resurrect a concurrent delete (4 processes)", async () => {
    const root = freshRoot();
    const store = createLocalStore({ root });
    const procs = await Promise.all(
      Array.from({ length: PROCESSES }, (_, i) => startChild(root, i)),
    );
    for (let round = 0; round < ROUNDS; round += 1) {
      const key = `race/resurrect/${round}`;
      const { etag } = await store.put(key, new TextEncoder().encode(`base ${round}`));
      const replies = await Promise.all(
        procs.map((child, i) => {
          const reply = nextMessage<RoundReply>(child);
          child.send(
            i % 2 === 0
              ? { op: "delete", round, key }
              : { op: "cas", round, key, etag, racers: RACERS_PER_PROCESS },
          );
          return reply;
        }),
      );
      const outcomes = replies.flatMap((r) => r.outcomes);
      // Every delete answered success, so whichever order the writes took, the key is
      // gone: a CAS ordered after a delete must have conflicted, never recreated it.
      expect(outcomes.filter((o) => o.won && o.etag === undefined).length).toBe(PROCESSES / 2);
      expect({ round, after: await store.head(key) }).toEqual({ round, after: null });
    }
  }, 60_000);

  it.each(["deleteMany", "delete"] as const)(
    "R3 %s honours the lock of a compare-and-swap that has compared: it never reports deleted a key the swap then writes",
    async (how) => {
      const root = freshRoot();
      // The swap below keeps the key's lock until it is told to finish, so a delete that
      // honours the lock is refused after this wait (nothing deleted) instead of 30 s.
      const store = createLocalStore({ root, lockTimeoutMs: 200 });
      const key = "r3/held";
      const { etag } = await store.put(key, new TextEncoder().encode("base"));
      // A neighbour keeps the folder: an emptied folder is removed, and a rename into a
      // removed folder fails, which would hide a resurrection behind that accident.
      await store.put("r3/neighbour", new TextEncoder().encode("stays"));
      const swapper = await startChild(root, 0);
      const compared = nextMessage(swapper);
      swapper.send({ op: "cas-held-before-rename", key, etag, body: "swapped" });
      expect(await compared).toEqual({ compared: true });

      // The other process's swap holds the lock with the ETag compared, its rename to come:
      // unlinking now would let that rename bring the key back after "deleted" (R3).
      const deletion =
        how === "deleteMany"
          ? await store.deleteMany([key])
          : await store.delete(key).then(
              () => ({ deleted: [key], failed: [] }),
              (error: unknown) => ({ deleted: [], failed: [{ key, error }] }),
            );
      const swapped = nextMessage<RoundReply>(swapper);
      swapper.send({ op: "finish-rename" });
      expect((await swapped).outcomes).toEqual([
        { won: true, etag: expect.any(String), body: "swapped" },
      ]);
      const after = await store.get(key);
      expect({
        deleted: deletion.deleted,
        failed: deletion.failed.map((f) => [f.key, (f.error as HoldfastError).code]),
        after: after && new TextDecoder().decode(after.body),
      }).toEqual({ deleted: [], failed: [[key, "ELOCKTIMEOUT"]], after: "swapped" });
    },
    30_000,
  );

  it("a key that becomes a folder while other processes compare-and-swap it keeps one winner and its bytes", async () => {
    const root = freshRoot();
    const store = createLocalStore({ root });
    const procs = await Promise.all(
      Array.from({ length: PROCESSES }, (_, i) => startChild(root, i)),
    );
    for (let round = 0; round < ROUNDS; round += 1) {
      const key = `nest/${round}`;
      const { etag } = await store.put(key, new TextEncoder().encode(`base ${round}`));
      // Even children swap `nest/<round>`; odd ones create keys below it, which turns the
      // file into a folder holding it as its self file, under that key's lock.
      const replies = await Promise.all(
        procs.map((child, i) => {
          const reply = nextMessage<RoundReply>(child);
          child.send(
            i % 2 === 0
              ? { op: "cas", round, key, etag, racers: RACERS_PER_PROCESS }
              : { op: "create", round, key: `${key}/child-${i}`, racers: 1 },
          );
          return reply;
        }),
      );
      const swaps = replies.filter((_, i) => i % 2 === 0).flatMap((r) => r.outcomes);
      const creates = replies.filter((_, i) => i % 2 === 1).flatMap((r) => r.outcomes);
      const winners = swaps.filter((o) => o.won);
      expect({ round, winners: winners.length }).toEqual({ round, winners: 1 });
      expect(swaps.filter((o) => !o.won).map((o) => o.kind)).toEqual(
        Array(swaps.length - 1).fill("conflict"),
      );
      expect(creates.every((o) => o.won)).toBe(true);
      const stored = await store.get(key);
      expect(new TextDecoder().decode(stored!.body)).toBe(winners[0]!.body);
      expect(stored!.etag).toBe(winners[0]!.etag);
      const listed = [];
      for await (const meta of listAll(store, `${key}`)) listed.push(meta.key);
      expect(listed).toEqual([key, `${key}/child-1`, `${key}/child-3`]);
    }
  }, 60_000);

  it("a SIGKILLed lock holder does not block the next writer", async () => {
    const root = freshRoot();
    const store = createLocalStore({ root });
    const { etag } = await store.put("locked/key", new TextEncoder().encode("v1"));
    const holder = await startChild(root, 0);
    const locked = nextMessage<{ locked: boolean }>(holder);
    holder.send({ op: "hold-lock", key: "locked/key" });
    expect((await locked).locked).toBe(true);

    // While the holder lives, a CAS waits (so the child really holds this key's lock).
    let settled = false;
    const cas = store
      .put("locked/key", new TextEncoder().encode("v2"), { precondition: { ifMatch: etag } })
      .finally(() => {
        settled = true;
      });
    await new Promise((done) => setTimeout(done, 300));
    expect(settled).toBe(false);
    expect(new TextDecoder().decode((await store.get("locked/key"))!.body)).toBe("v1");

    const exited = new Promise((done) => holder.once("exit", done));
    holder.kill("SIGKILL");
    await exited;
    const started = Date.now();
    const result = await cas;
    expect(Date.now() - started).toBeLessThan(2_000);
    const stored = await store.get("locked/key");
    expect(new TextDecoder().decode(stored!.body)).toBe("v2");
    expect(stored!.etag).toBe(result.etag);
  }, 30_000);

  it("a writer that cannot get the lock in time is refused and writes nothing", async () => {
    const root = freshRoot();
    const store = createLocalStore({ root, lockTimeoutMs: 200 });
    await store.put("busy/key", new TextEncoder().encode("v1"));
    const holder = await startChild(root, 0);
    const locked = nextMessage<{ locked: boolean }>(holder);
    holder.send({ op: "hold-lock", key: "busy/key" });
    expect((await locked).locked).toBe(true);
    const { etag } = (await store.head("busy/key"))!;
    // Every mutation but create-only takes the key's lock: put, CAS, delete (R3 rests on it).
    const attempts = [
      store.put("busy/key", new TextEncoder().encode("v2")),
      store.put("busy/key", new TextEncoder().encode("v2"), { precondition: { ifMatch: etag } }),
      store.delete("busy/key"),
      store.delete("busy/key", { ifMatch: etag }),
    ].map((attempt) => attempt.catch((e: unknown) => e)); // all wait at once: handle each now
    for (const attempt of attempts) {
      const error = await attempt;
      expect(isHoldfastError(error, "refused")).toBe(true);
      expect(error).toMatchObject({ code: "ELOCKTIMEOUT", key: "busy/key" });
    }
    // A waiter's AbortSignal ends the wait: nothing written, kind "aborted".
    const patient = createLocalStore({ root });
    const aborted = await patient
      .put("busy/key", new TextEncoder().encode("v3"), { signal: AbortSignal.timeout(100) })
      .catch((e: unknown) => e);
    expect(isHoldfastError(aborted, "aborted")).toBe(true);
    const batch = await store.deleteMany(["busy/key"]);
    expect(batch.deleted).toEqual([]);
    expect(batch.failed.map((f) => [f.key, f.error.kind, f.error.code])).toEqual([
      ["busy/key", "refused", "ELOCKTIMEOUT"],
    ]);
    const after = await store.get("busy/key");
    expect(new TextDecoder().decode(after!.body)).toBe("v1");
    expect(after!.etag).toBe(etag);
    // Reads and create-only puts of other keys never wait for a key's lock.
    await store.put("busy/other", new Uint8Array(1), { precondition: { ifNoneMatch: "*" } });
    // A batch the caller declares create-only (no compare-and-swap ever names its keys:
    // data files, manifests) unlinks without the lock: the held lock does not stop it.
    const unlocked = await store.deleteMany(["busy/other"], { createOnly: true });
    expect(unlocked).toEqual({ deleted: ["busy/other"], failed: [] });
    expect(await store.head("busy/other")).toBeNull();
  }, 30_000);

  it("a writer SIGKILLed mid-write leaves a whole object and no visible temp file", async () => {
    const root = freshRoot();
    const store = createLocalStore({ root });
    const writer = await startChild(root, 0);
    const started = nextMessage(writer);
    writer.send({ op: "rewrite-forever", key: "crash/key", bytes: 1 << 20 });
    await started;
    await new Promise((done) => setTimeout(done, 400));
    const exited = new Promise((done) => writer.once("exit", done));
    writer.kill("SIGKILL");
    await exited;

    const got = await store.get("crash/key");
    expect(got?.size).toBe(1 << 20);
    const first = got!.body[0]!;
    expect(got!.body.every((b) => b === first)).toBe(true);
    const listed = [];
    for await (const meta of listAll(store, "")) listed.push(meta.key);
    expect(listed).toEqual(["crash/key"]);
    // The next writer proceeds at once: the dead writer's lock went with it.
    const next = await store.put("crash/key", new Uint8Array(3), {
      precondition: { ifMatch: got!.etag },
    });
    expect((await store.head("crash/key"))?.etag).toBe(next.etag);
    // Leftover temp files (if the kill hit between write and rename) stay in the private
    // folder, never beside the object.
    expect(readdirSync(join(root, "crash"))).toEqual(["key"]);
  }, 30_000);
});
