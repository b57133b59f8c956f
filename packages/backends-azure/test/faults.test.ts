// Lost answers, resets, error answers and stripped headers between the Azure SDK and a real
// Azurite, through @holdfast/fault-proxy. Scenario ids (docs/guarantees.md) lead the test names.
import {
  bytesEqual,
  isHoldfastError,
  type ObjectStore,
  putIfAbsent,
  putIfMatch,
  type ReissuePolicy,
  ulidIds,
} from "@holdfast/conditional-store";
import { azureError, type FaultProxy, startFaultProxy } from "@holdfast/fault-proxy";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createAzureStore, openAzureStore } from "../src/index.js";
import {
  azuriteTarget,
  ensureContainer,
  freshPrefix,
  sasConnectionString as sasViaOrigin,
  withOrigin,
} from "./azurite.js";

const target = azuriteTarget();
const policy: ReissuePolicy = { pausesMs: [10, 10, 10, 10] };
/** The probe keeps the default re-issue policy; its pauses are cut short here. */
const fastSleep = () => new Promise<void>((resolve) => setTimeout(resolve, 1));
const ids = ulidIds();

let proxy: FaultProxy;
// Top-level: a missing Azurite fails the file outright instead of skipping its tests.
await ensureContainer(target);
beforeEach(async () => {
  proxy = await startFaultProxy({ target: target.origin });
});
afterEach(() => proxy.close());

interface Pair {
  /** The store under test, talking through the proxy. */
  via: ObjectStore;
  /** The same location, straight to Azurite: the observer. */
  direct: ObjectStore;
  prefix: string;
}

function storesFor(client: "single-attempt" | "repeating"): Pair {
  const prefix = freshPrefix(`faults-${client}`);
  const via = createAzureStore({
    container: target.container,
    prefix,
    connectionString: withOrigin(target.connectionString, proxy.url),
    client,
    // The SDK's own retries, kept short: a repeating client still repeats, just quickly.
    retry: { retryDelayInMs: 10, maxRetryDelayInMs: 20 },
  });
  const direct = createAzureStore({
    container: target.container,
    prefix,
    connectionString: target.connectionString,
    client: "single-attempt",
  });
  return { via, direct, prefix };
}

/** Matches the request target of one blob (not its neighbours with a longer name). */
function blobPath(prefix: string, key: string): RegExp {
  const escaped = `/${target.container}/${prefix}/${key}`.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  return new RegExp(`${escaped}(?:\\?|$)`);
}

function seen(method: string, path: RegExp) {
  return proxy.requests.filter((r) => r.method === method && path.test(r.path));
}

/** Bytes naming their writer, as every exclusive claim's payload must (docs/guarantees.md, conditional requests). */
function claim(label: string): Uint8Array {
  return new TextEncoder().encode(JSON.stringify({ label, writer: ids.next() }));
}

describe("lost answers through the fault proxy (Azurite)", () => {
  it("C1 an applied create whose answer was lost resolves as applied (single-attempt client)", async () => {
    const { via, direct, prefix } = storesFor("single-attempt");
    const path = blobPath(prefix, "claim.json");
    proxy.addRule({ method: "PUT", path, nth: 1, action: { type: "drop-response" } });
    const body = claim("c1");

    const outcome = await putIfAbsent(via, "claim.json", body, { policy });

    expect(outcome.status).toBe("applied");
    const stored = await direct.get("claim.json");
    expect(stored && bytesEqual(stored.body, body)).toBe(true);
    expect(outcome.status === "applied" && outcome.etag).toBe(stored?.etag);
    // The first copy landed (201, answer lost); the re-issue met BlobAlreadyExists.
    expect(seen("PUT", path).map((r) => [r.action, r.status])).toEqual([
      ["drop-response", 201],
      ["forward", 409],
    ]);
    expect(seen("GET", path)).toHaveLength(1);
  });

  it("C1 a connection reset before the create reached Azurite is re-issued and applies once", async () => {
    const { via, direct, prefix } = storesFor("single-attempt");
    const path = blobPath(prefix, "claim.json");
    proxy.addRule({ method: "PUT", path, nth: 1, action: { type: "reset" } });
    const body = claim("c1-reset");

    const outcome = await putIfAbsent(via, "claim.json", body, { policy });

    expect(outcome.status).toBe("applied");
    expect(outcome.status === "applied" && outcome.etag).toBe(
      (await direct.head("claim.json"))?.etag,
    );
    expect(seen("PUT", path).map((r) => r.action)).toEqual(["reset", "forward"]);
  });

  it("C5 putIfMatch whose answer was lost resolves by read-back as applied", async () => {
    const { via, direct, prefix } = storesFor("single-attempt");
    const path = blobPath(prefix, "state.json");
    const { etag: before } = await direct.put("state.json", claim("v1"));
    proxy.addRule({
      method: "PUT",
      path,
      withHeaders: ["if-match"],
      nth: 1,
      action: { type: "drop-response" },
    });
    const next = claim("v2");

    const outcome = await putIfMatch(via, "state.json", next, before, { policy });

    expect(outcome.status).toBe("applied");
    const stored = await direct.get("state.json");
    expect(stored && bytesEqual(stored.body, next)).toBe(true);
    expect(stored?.etag).not.toBe(before);
    expect(outcome.status === "applied" && outcome.etag).toBe(stored?.etag);
    // The re-issue's If-Match named the old ETag: Azurite answered 412, the read-back decided.
    expect(seen("PUT", path).map((r) => r.status)).toEqual([201, 412]);
    expect(seen("GET", path)).toHaveLength(1);
  });

  it("C5 putIfMatch whose lost copy never landed, while another writer moved the key, is a conflict", async () => {
    const { via, direct, prefix } = storesFor("single-attempt");
    const path = blobPath(prefix, "state.json");
    const { etag: before } = await direct.put("state.json", claim("v1"));
    proxy.addRule({ method: "PUT", path, nth: 1, action: { type: "drop-request" } });
    const theirs = claim("theirs");
    let competitorWrote = false;

    const outcome = await putIfMatch(via, "state.json", claim("ours"), before, {
      policy,
      // The competitor writes during our first pause, before our re-issue.
      sleep: async () => {
        if (!competitorWrote) {
          competitorWrote = true;
          await direct.put("state.json", theirs);
        }
      },
    });

    expect(outcome.status).toBe("conflict");
    expect(outcome.status === "conflict" && outcome.current?.body).toEqual(theirs);
    expect(seen("PUT", path).map((r) => r.action)).toEqual(["drop-request", "forward"]);
  });

  it("C5 putIfAbsent whose every answer was lost and whose first copy landed resolves as applied", async () => {
    const { via, direct, prefix } = storesFor("single-attempt");
    const path = blobPath(prefix, "claim.json");
    proxy.addRule({ method: "PUT", path, action: { type: "drop-response" } });
    const body = claim("c5-all-lost");

    const outcome = await putIfAbsent(via, "claim.json", body, { policy });

    expect(outcome.status).toBe("applied");
    expect((await direct.get("claim.json"))?.body).toEqual(body);
    // One copy and four re-issues, bounded by the policy.
    expect(seen("PUT", path).map((r) => r.status)).toEqual([201, 409, 409, 409, 409]);
  });

  it("C5 putIfAbsent whose copies never arrived stays unresolved, never a failure or success", async () => {
    const { via, direct, prefix } = storesFor("single-attempt");
    const path = blobPath(prefix, "claim.json");
    proxy.addRule({ method: "PUT", path, action: { type: "drop-request" } });

    const error = await putIfAbsent(via, "claim.json", claim("c5-unknown"), { policy }).catch(
      (e: unknown) => e,
    );

    expect(isHoldfastError(error, "unresolved")).toBe(true);
    expect(error).toMatchObject({
      operation: "put",
      key: "claim.json",
      precondition: { ifNoneMatch: "*" },
    });
    expect(seen("PUT", path)).toHaveLength(5);
    expect(await direct.get("claim.json")).toBeNull();
  });

  it("C2 two claimants of one key whose answers are all lost: exactly one resolves applied", async () => {
    const first = storesFor("single-attempt");
    const path = blobPath(first.prefix, "lock.json");
    const second = createAzureStore({
      container: target.container,
      prefix: first.prefix,
      connectionString: withOrigin(target.connectionString, proxy.url),
      client: "repeating",
      retry: { retryDelayInMs: 10, maxRetryDelayInMs: 20 },
    });
    proxy.addRule({ method: "PUT", path, action: { type: "drop-response" } });
    const ours = claim("first");
    const theirs = claim("second");

    const outcomes = await Promise.all([
      putIfAbsent(first.via, "lock.json", ours, { policy }),
      putIfAbsent(second, "lock.json", theirs, { policy }),
    ]);

    // Both writers lost every answer; the ULIDs in the bytes let each read-back tell
    // its own copy from the other's, so they never both believe they won.
    expect(outcomes.map((o) => o.status).sort()).toEqual(["applied", "conflict"]);
    const stored = await first.direct.get("lock.json");
    const winner = outcomes[0]?.status === "applied" ? ours : theirs;
    expect(stored?.body).toEqual(winner);
  });

  it("C6 a repeating client reads back its own earlier copy after a first conflict", async () => {
    const { via, direct, prefix } = storesFor("repeating");
    const path = blobPath(prefix, "claim.json");
    proxy.addRule({ method: "PUT", path, nth: 1, action: { type: "drop-response" } });
    const body = claim("c6");
    const reissues: unknown[] = [];

    const outcome = await putIfAbsent(via, "claim.json", body, {
      policy,
      onReissue: (_attempt, error) => reissues.push(error),
    });

    expect(outcome.status).toBe("applied");
    expect(outcome.status === "applied" && outcome.etag).toBe(
      (await direct.head("claim.json"))?.etag,
    );
    // The SDK itself repeated the lost PUT and met its own blob: the resolver did not
    // re-issue, it read back after that first conflict.
    expect(reissues).toEqual([]);
    expect(seen("PUT", path).map((r) => [r.action, r.status])).toEqual([
      ["drop-response", 201],
      ["forward", 409],
    ]);
    expect(seen("GET", path)).toHaveLength(1);
  });

  it("C6 a repeating client's conflict with another writer's blob reads back and stays a conflict", async () => {
    const { via, direct, prefix } = storesFor("repeating");
    const path = blobPath(prefix, "claim.json");
    const theirs = claim("theirs");
    await direct.put("claim.json", theirs);

    const outcome = await putIfAbsent(via, "claim.json", claim("ours"), { policy });

    expect(outcome.status).toBe("conflict");
    expect(outcome.status === "conflict" && outcome.current?.body).toEqual(theirs);
    expect(seen("GET", path)).toHaveLength(1);
  });

  it("C6 a single-attempt client's first conflict is read back before it is believed, and another writer's blob stays a conflict", async () => {
    const { via, direct, prefix } = storesFor("single-attempt");
    const path = blobPath(prefix, "claim.json");
    const theirs = claim("theirs");
    await direct.put("claim.json", theirs);

    const outcome = await putIfAbsent(via, "claim.json", claim("ours"), { policy });

    // docs/guarantees.md, "Conditional requests": every conflict is read back (a copy
    // repeated on the way may be this writer's); another writer's bytes keep it a conflict.
    expect(outcome.status).toBe("conflict");
    expect(outcome.status === "conflict" && outcome.current?.body).toEqual(theirs);
    expect(seen("PUT", path)).toHaveLength(1);
    expect(seen("GET", path)).toHaveLength(1);
  });

  it("C7 a single-attempt client's 403 is refused: not re-issued, nothing written", async () => {
    const { via, direct, prefix } = storesFor("single-attempt");
    const path = blobPath(prefix, "claim.json");
    proxy.addRule({
      method: "PUT",
      path,
      nth: 1,
      action: azureError(403, "AuthorizationPermissionMismatch", "not allowed"),
    });

    const error = await putIfAbsent(via, "claim.json", claim("c7"), { policy }).catch(
      (e: unknown) => e,
    );

    expect(isHoldfastError(error, "auth")).toBe(true);
    expect(error).toMatchObject({
      status: 403,
      code: "AuthorizationPermissionMismatch",
      key: "claim.json",
    });
    expect(seen("PUT", path)).toHaveLength(1);
    expect(await direct.get("claim.json")).toBeNull();
  });

  it("C7 a repeating client's auth error is re-issued: its earlier copy landed and reads back as applied", async () => {
    const { via, direct, prefix } = storesFor("repeating");
    const path = blobPath(prefix, "claim.json");
    // Copy 1 lands but its answer is lost; the SDK's own repeat is then refused with 403.
    proxy.addRule({ method: "PUT", path, nth: 1, action: { type: "drop-response" } });
    proxy.addRule({ method: "PUT", path, nth: 2, action: azureError(403, "AuthorizationFailure") });
    const body = claim("c7-repeating");
    const reissued: unknown[] = [];

    const outcome = await putIfAbsent(via, "claim.json", body, {
      policy,
      onReissue: (_attempt, error) => reissued.push(error),
    });

    expect(outcome.status).toBe("applied");
    expect((await direct.get("claim.json"))?.body).toEqual(body);
    expect(reissued).toHaveLength(1);
    expect(isHoldfastError(reissued[0], "auth")).toBe(true);
    expect(seen("PUT", path).map((r) => r.status)).toEqual([201, 403, 409]);
  });
});

describe("capability probe through the fault proxy (Azurite)", () => {
  const sasConnectionString = (origin: string) => sasViaOrigin(target, origin);

  it("accepts Azurite through an honest proxy and leaves no probe object behind", async () => {
    const prefix = freshPrefix("probe-ok");
    const store = await openAzureStore({
      container: target.container,
      prefix,
      connectionString: sasConnectionString(proxy.url),
      client: "single-attempt",
      probe: { sleep: fastSleep },
    });
    expect(store.location).toBe(`az://${target.container}/${prefix}`);
    const statuses = (header: string) =>
      proxy.requests.filter((r) => r.method === "PUT" && r.headers[header]).map((r) => r.status);
    // Create, then create again (409 BlobAlreadyExists); a stale if-match got 412.
    expect(statuses("if-none-match")).toEqual([201, 409]);
    expect(statuses("if-match")).toContain(412);
    expect((await store.list("")).objects).toEqual([]);
  });

  it("refuses a store that ignores create-only (If-None-Match stripped) with kind unsupported", async () => {
    proxy.addRule({
      method: "PUT",
      withHeaders: ["if-none-match"],
      action: { type: "strip-header", headers: ["if-none-match"] },
    });
    const prefix = freshPrefix("probe-stripped");

    const error = await openAzureStore({
      container: target.container,
      prefix,
      connectionString: sasConnectionString(proxy.url),
      client: "single-attempt",
      probe: { sleep: fastSleep },
    }).catch((e: unknown) => e);

    expect(isHoldfastError(error, "unsupported")).toBe(true);
    expect(error).toMatchObject({ operation: "probe" });
    // The stripped create really did overwrite: that is what the probe caught.
    const creates = proxy.requests.filter((r) => r.method === "PUT" && r.headers["if-none-match"]);
    expect(creates.map((r) => [r.action, r.status])).toEqual([
      ["strip-header", 201],
      ["strip-header", 201],
    ]);
  });

  it("refuses a store that ignores If-Match (stripped) with kind unsupported", async () => {
    proxy.addRule({
      method: "PUT",
      withHeaders: ["if-match"],
      action: { type: "strip-header", headers: ["if-match"] },
    });

    const error = await openAzureStore({
      container: target.container,
      prefix: freshPrefix("probe-no-if-match"),
      connectionString: sasConnectionString(proxy.url),
      client: "repeating",
      retry: { retryDelayInMs: 10, maxRetryDelayInMs: 20 },
      probe: { sleep: fastSleep },
    }).catch((e: unknown) => e);

    expect(isHoldfastError(error, "unsupported")).toBe(true);
    expect(error).toMatchObject({ operation: "probe" });
  });
});
