// Lost answers, error answers after the write landed, and resets between the GCS client and a
// real fake-gcs-server, through @holdfast/fault-proxy. Scenario ids (docs/guarantees.md) lead
// the test names.
import {
  bytesEqual,
  deleteIfMatch,
  isHoldfastError,
  type ObjectStore,
  putIfAbsent,
  putIfMatch,
  type ReissuePolicy,
  ulidIds,
} from "@holdfast/conditional-store";
import { type FaultProxy, gcsError, startFaultProxy } from "@holdfast/fault-proxy";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createGcsStore } from "../src/index.js";
import { ensureBucket, freshPrefix, gcsEmulator } from "./emulator.js";

const emulator = gcsEmulator();
const policy: ReissuePolicy = { pausesMs: [10, 10, 10, 10] };
const ids = ulidIds();

let proxy: FaultProxy;
// Top-level: a missing emulator fails the file outright instead of skipping its tests.
await ensureBucket(emulator);
beforeEach(async () => {
  proxy = await startFaultProxy({ target: emulator.endpoint });
});
afterEach(() => proxy.close());

interface Pair {
  /** The store under test, talking through the proxy. */
  via: ObjectStore;
  /** The same location, straight to the emulator: the observer. */
  direct: ObjectStore;
  prefix: string;
}

function storesFor(
  client: "single-attempt" | "repeating",
  extra: { conditionalDelete?: boolean } = {},
): Pair {
  const prefix = freshPrefix(`f${client === "repeating" ? "r" : "s"}`);
  const via = createGcsStore({
    bucket: emulator.bucket,
    prefix,
    endpoint: proxy.url,
    client,
    conditionalDelete: extra.conditionalDelete ?? false,
    // The client's own retries, kept short: a repeating client still repeats (1 s is its floor).
    retry: { maxRetries: 2, retryDelayMultiplier: 1, maxRetryDelay: 1 },
    // The backend's own re-issue of idempotent requests, kept short as well.
    reissue: { policy },
  });
  const direct = createGcsStore({
    bucket: emulator.bucket,
    prefix,
    endpoint: emulator.endpoint,
    conditionalDelete: false,
  });
  return { via, direct, prefix };
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** Matches the uploads (objects.insert) of one object, by its `name` query parameter. */
function uploadPath(prefix: string, key: string): RegExp {
  const name = encodeURIComponent(`${prefix}/${key}`);
  return new RegExp(
    `^/upload/storage/v1/b/${escapeRegExp(emulator.bucket)}/o\\?(?:.*&)?name=${escapeRegExp(name)}(?:&|$)`,
  );
}

/** Matches the requests on one object (objects.get, media download, objects.delete). */
function objectPath(prefix: string, key: string): RegExp {
  const name = encodeURIComponent(`${prefix}/${key}`);
  return new RegExp(
    `^(?:/download)?/storage/v1/b/${escapeRegExp(emulator.bucket)}/o/${escapeRegExp(name)}(?:\\?|$)`,
  );
}

function seen(method: string, path: RegExp) {
  return proxy.requests.filter((r) => r.method === method && path.test(r.path));
}

/** The `ifGenerationMatch` a request carried, or null. */
function generationMatch(path: string): string | null {
  return new URL(path, "http://proxy").searchParams.get("ifGenerationMatch");
}

/** A success status as "2xx" (GCS answers a delete 204, fake-gcs-server 200); others as they are. */
function statusClass(status: number | undefined): number | "2xx" | undefined {
  return status !== undefined && status >= 200 && status < 300 ? "2xx" : status;
}

/** Bytes naming their writer, as every exclusive claim's payload must (docs/guarantees.md, conditional requests). */
function claim(label: string): Uint8Array {
  return new TextEncoder().encode(JSON.stringify({ label, writer: ids.next() }));
}

describe("lost answers through the fault proxy (fake-gcs-server)", () => {
  it("C1 an applied create whose answer was lost resolves as applied (single-attempt client)", async () => {
    const { via, direct, prefix } = storesFor("single-attempt");
    const path = uploadPath(prefix, "claim.json");
    proxy.addRule({ method: "POST", path, nth: 1, action: { type: "drop-response" } });
    const body = claim("c1");

    const outcome = await putIfAbsent(via, "claim.json", body, { policy });

    expect(outcome.status).toBe("applied");
    const stored = await direct.get("claim.json");
    expect(stored && bytesEqual(stored.body, body)).toBe(true);
    expect(outcome.status === "applied" && outcome.etag).toBe(stored?.etag);
    // The first copy landed (answer lost); the re-issue met ifGenerationMatch=0 → 412.
    expect(seen("POST", path).map((r) => [r.action, r.status, generationMatch(r.path)])).toEqual([
      ["drop-response", 200, "0"],
      ["forward", 412, "0"],
    ]);
    // One read-back decided it.
    expect(seen("GET", objectPath(prefix, "claim.json"))).toHaveLength(1);
  });

  it("C8 a create that landed but answered 500: its re-issue sees 'already exists' (412) and the read-back resolves it applied, never a false conflict", async () => {
    const { via, direct, prefix } = storesFor("single-attempt");
    const path = uploadPath(prefix, "manifest.json");
    proxy.addRule({
      method: "POST",
      path,
      nth: 1,
      action: gcsError(500, "backendError", { after: "forward" }),
    });
    const body = claim("c8");

    const outcome = await putIfAbsent(via, "manifest.json", body, { policy });

    expect(outcome.status).toBe("applied");
    const stored = await direct.get("manifest.json");
    expect(stored && bytesEqual(stored.body, body)).toBe(true);
    expect(outcome.status === "applied" && outcome.etag).toBe(stored?.etag);
    expect(seen("POST", path).map((r) => [r.action, r.status])).toEqual([
      ["replace-response", 200],
      ["forward", 412],
    ]);
  });

  it("C8 a create answered 500 that never landed, while another writer created the key, is a conflict", async () => {
    const { via, direct, prefix } = storesFor("single-attempt");
    const path = uploadPath(prefix, "manifest.json");
    proxy.addRule({ method: "POST", path, nth: 1, action: gcsError(500, "backendError") });
    const theirs = claim("theirs");
    let competitorWrote = false;

    const outcome = await putIfAbsent(via, "manifest.json", claim("ours"), {
      policy,
      sleep: async () => {
        if (!competitorWrote) {
          competitorWrote = true;
          await direct.put("manifest.json", theirs, { precondition: { ifNoneMatch: "*" } });
        }
      },
    });

    expect(outcome.status).toBe("conflict");
    expect(outcome.status === "conflict" && outcome.current?.body).toEqual(theirs);
  });

  it("C5 a compare-and-swap whose answer was cut resolves by read-back as applied", async () => {
    const { via, direct, prefix } = storesFor("single-attempt");
    const path = uploadPath(prefix, "state.json");
    const { etag: before } = await direct.put("state.json", claim("v1"));
    proxy.addRule({ method: "POST", path, nth: 1, action: { type: "drop-response" } });
    const next = claim("v2");

    const outcome = await putIfMatch(via, "state.json", next, before, { policy });

    expect(outcome.status).toBe("applied");
    const stored = await direct.get("state.json");
    expect(stored && bytesEqual(stored.body, next)).toBe(true);
    expect(stored?.etag).not.toBe(before);
    expect(outcome.status === "applied" && outcome.etag).toBe(stored?.etag);
    // Both copies named the old generation: the second met 412, the read-back decided.
    expect(seen("POST", path).map((r) => [r.status, generationMatch(r.path)])).toEqual([
      [200, before],
      [412, before],
    ]);
  });

  it("C5 a compare-and-swap whose cut copy never landed, while another writer moved the key, is a conflict", async () => {
    const { via, direct, prefix } = storesFor("single-attempt");
    const path = uploadPath(prefix, "state.json");
    const { etag: before } = await direct.put("state.json", claim("v1"));
    proxy.addRule({ method: "POST", path, nth: 1, action: { type: "drop-request" } });
    const theirs = claim("theirs");
    let competitorWrote = false;

    const outcome = await putIfMatch(via, "state.json", claim("ours"), before, {
      policy,
      sleep: async () => {
        if (!competitorWrote) {
          competitorWrote = true;
          await direct.put("state.json", theirs);
        }
      },
    });

    expect(outcome.status).toBe("conflict");
    expect(outcome.status === "conflict" && outcome.current?.body).toEqual(theirs);
    expect(seen("POST", path).map((r) => r.action)).toEqual(["drop-request", "forward"]);
  });

  it("C5 a throttled create (429) is re-issued and applies once", async () => {
    const { via, direct, prefix } = storesFor("single-attempt");
    const path = uploadPath(prefix, "claim.json");
    proxy.addRule({ method: "POST", path, nth: 1, action: gcsError(429, "rateLimitExceeded") });
    const body = claim("c5-429");

    const outcome = await putIfAbsent(via, "claim.json", body, { policy });

    expect(outcome.status).toBe("applied");
    expect((await direct.get("claim.json"))?.body).toEqual(body);
    expect(seen("POST", path).map((r) => r.status)).toEqual([429, 200]);
  });

  it("C5 every copy lost before applying leaves the create unresolved, never failed (invariant 4)", async () => {
    const { via, direct, prefix } = storesFor("single-attempt");
    const path = uploadPath(prefix, "claim.json");
    proxy.addRule({ method: "POST", path, action: gcsError(503, "backendError") });

    const error = await putIfAbsent(via, "claim.json", claim("c5-unknown"), { policy }).catch(
      (e: unknown) => e,
    );

    expect(isHoldfastError(error, "unresolved")).toBe(true);
    expect(error).toMatchObject({
      operation: "put",
      key: "claim.json",
      precondition: { ifNoneMatch: "*" },
    });
    // One copy and four re-issues, bounded by the policy; the client added none.
    expect(seen("POST", path)).toHaveLength(5);
    expect(await direct.get("claim.json")).toBeNull();
  });

  it("C6 a repeating client's retry after a landed create answered 503 meets 412; the resolver reads back its own bytes", async () => {
    const { via, direct, prefix } = storesFor("repeating");
    const path = uploadPath(prefix, "claim.json");
    proxy.addRule({
      method: "POST",
      path,
      nth: 1,
      action: gcsError(503, "backendError", { after: "forward" }),
    });
    const body = claim("c6");

    const outcome = await putIfAbsent(via, "claim.json", body, { policy });

    expect(outcome.status).toBe("applied");
    expect((await direct.get("claim.json"))?.body).toEqual(body);
    // The client itself retried (declared "repeating"); its retry met our own first copy.
    expect(seen("POST", path).map((r) => [r.action, r.status])).toEqual([
      ["replace-response", 200],
      ["forward", 412],
    ]);
  }, 20_000);

  it("C6 a repeating client's first conflict with another writer's bytes stays a conflict", async () => {
    const { via, direct } = storesFor("repeating");
    const theirs = claim("theirs");
    await direct.put("claim.json", theirs);

    const outcome = await putIfAbsent(via, "claim.json", claim("ours"), { policy });

    expect(outcome.status).toBe("conflict");
    expect(outcome.status === "conflict" && outcome.current?.body).toEqual(theirs);
  });

  it("C5 a conditional delete retried after it applied resolves as applied by read-back", async () => {
    // fake-gcs-server ignores ifGenerationMatch on delete, so the guard itself is not tested
    // here (it is declared off there); this is the lost answer of a delete that applied, at
    // the current generation, as on GCS.
    const { via, direct, prefix } = storesFor("single-attempt", { conditionalDelete: true });
    const path = objectPath(prefix, "intent.json");
    const { etag } = await direct.put("intent.json", claim("intent"));
    proxy.addRule({ method: "DELETE", path, nth: 1, action: { type: "drop-response" } });

    const outcome = await deleteIfMatch(via, "intent.json", etag, { policy });

    expect(outcome.status).toBe("applied");
    expect(await direct.head("intent.json")).toBeNull();
    expect(
      seen("DELETE", path).map((r) => [r.action, statusClass(r.status), generationMatch(r.path)]),
    ).toEqual([
      ["drop-response", "2xx", etag],
      ["forward", 404, etag],
    ]);
  });

  it("C5 an unconditional delete that applied but answered 503 is re-issued by the backend and reports success (404 is deleted)", async () => {
    const { via, direct, prefix } = storesFor("single-attempt");
    const path = objectPath(prefix, "data.bin");
    await direct.put("data.bin", claim("data"));
    proxy.addRule({
      method: "DELETE",
      path,
      nth: 1,
      action: gcsError(503, "backendError", { after: "forward" }),
    });

    // A retired file's delete must not end a cleanup as unknown: the backend re-issues it,
    // and the re-issue's 404 says the object is gone.
    expect(await via.deleteMany(["data.bin"])).toEqual({ deleted: ["data.bin"], failed: [] });
    expect(await direct.head("data.bin")).toBeNull();
    expect(seen("DELETE", path).map((r) => statusClass(r.status))).toEqual(["2xx", 404]);
  });
});

describe("what the client sends", () => {
  it("a single-attempt client sends a failing conditional request once; a failing read is re-issued by the backend's policy", async () => {
    const { via, prefix } = storesFor("single-attempt");
    const path = uploadPath(prefix, "once.json");
    const read = objectPath(prefix, "once.json");
    proxy.addRule({ method: "POST", path, action: gcsError(503, "backendError") });
    proxy.addRule({ method: "GET", path: read, action: gcsError(503, "backendError") });

    const put = await via
      .put("once.json", claim("once"), { precondition: { ifNoneMatch: "*" } })
      .catch((e: unknown) => e);
    const head = await via.head("once.json").catch((e: unknown) => e);

    expect(isHoldfastError(put, "ambiguous")).toBe(true);
    expect(isHoldfastError(head, "ambiguous")).toBe(true);
    // The conditional upload is the resolver's to re-issue: the backend sent it once.
    expect(seen("POST", path)).toHaveLength(1);
    // A read changes nothing when repeated: sent once and re-issued per the policy.
    expect(seen("GET", read)).toHaveLength(1 + policy.pausesMs.length);
  });

  it("a repeating client retries a failing conditional create by itself", async () => {
    const { via, direct, prefix } = storesFor("repeating");
    const path = uploadPath(prefix, "again.json");
    proxy.addRule({ method: "POST", path, nth: 1, action: gcsError(503, "backendError") });
    const body = claim("again");

    const { etag } = await via.put("again.json", body, { precondition: { ifNoneMatch: "*" } });

    expect(etag).toBe((await direct.head("again.json"))?.etag);
    expect(seen("POST", path).map((r) => r.status)).toEqual([503, 200]);
  }, 20_000);

  it("a put is one upload request carrying the precondition, and nothing else (no read, no delete)", async () => {
    const { via, direct, prefix } = storesFor("single-attempt");
    const { etag: first } = await via.put("k.json", claim("v1"), {
      precondition: { ifNoneMatch: "*" },
    });
    const { etag: second } = await via.put("k.json", claim("v2"), {
      precondition: { ifMatch: first },
    });

    expect(second).toBe((await direct.head("k.json"))?.etag);
    expect(proxy.requests.map((r) => [r.method, generationMatch(r.path)])).toEqual([
      ["POST", "0"],
      ["POST", first],
    ]);
    expect(proxy.requests.every((r) => uploadPath(prefix, "k.json").test(r.path))).toBe(true);
    expect(new URL(proxy.requests[0]!.path, "http://proxy").searchParams.get("uploadType")).toBe(
      "multipart",
    );
  });

  it("a conditional delete sends the generation it was given as ifGenerationMatch", async () => {
    const { via, direct, prefix } = storesFor("single-attempt", { conditionalDelete: true });
    const { etag } = await direct.put("d.json", claim("d"));

    await via.delete("d.json", { ifMatch: etag });

    expect(
      seen("DELETE", objectPath(prefix, "d.json")).map((r) => generationMatch(r.path)),
    ).toEqual([etag]);
    expect(await direct.head("d.json")).toBeNull();
  });

  it("a get is one media request, and its ETag is the generation that answer carried", async () => {
    const { via, direct, prefix } = storesFor("single-attempt");
    const { etag } = await direct.put("g.json", claim("g"));

    const got = await via.get("g.json");

    expect(got?.etag).toBe(etag);
    expect(proxy.requests).toHaveLength(1);
    expect(proxy.requests[0]?.path).toMatch(objectPath(prefix, "g.json"));
    expect(new URL(proxy.requests[0]!.path, "http://proxy").searchParams.get("alt")).toBe("media");
  });
});
