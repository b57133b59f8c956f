import { chmod, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ProblemShape } from "@holdfast/api-shapes";
import { FakeTime, FaultStore } from "@holdfast/conditional-store/testing";
import { createContext } from "@holdfast/protocol";
import { afterEach, describe, expect, it } from "vitest";
import {
  loadTokens,
  REVOKED_TOKENS_PREFIX,
  revokeToken,
  TOKENS_FILE_WRITABLE,
} from "../src/index.js";
import { as, freshStore, seedDataset, TOKEN_ENTRIES, testServer } from "./support.js";

describe("authentication safety", () => {
  const cleanups: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  const dataset = async () => {
    const fresh = await freshStore("local");
    cleanups.push(fresh.dispose);
    await seedDataset(fresh.store, 1);
    return fresh.store;
  };

  it("A1 failed authentications are limited per client address: past the limit a 429 problem with Retry-After, even for a valid token, until the window of the injected clock ends", async () => {
    const store = await dataset();
    const time = new FakeTime();
    const app = await testServer([{ name: "ds", store }], {
      failedAuthLimit: { maxFailures: 3, windowMs: 60_000 },
      context: { clock: time },
    });
    cleanups.push(() => app.close());
    const get = (remoteAddress: string, headers: Record<string, string>) =>
      app.inject({ url: "/v1/datasets", remoteAddress, headers });
    const guess = { authorization: "Bearer hf_guessed" };
    for (let i = 0; i < 3; i++) expect((await get("10.0.0.1", guess)).statusCode).toBe(401);
    const blocked = await get("10.0.0.1", as("reader"));
    const problem = ProblemShape.parse(blocked.json());
    expect(blocked.statusCode).toBe(429);
    expect(blocked.headers["content-type"]).toMatch(/^application\/problem\+json/);
    expect(problem).toMatchObject({ status: 429, kind: "rate-limited", code: "AUTH_RATE_LIMITED" });
    expect(blocked.headers["retry-after"]).toBe("60");
    // Another address is not affected; requests without a token guess nothing and do not count.
    expect((await get("10.0.0.2", as("reader"))).statusCode).toBe(200);
    for (let i = 0; i < 5; i++) expect((await get("10.0.0.3", {})).statusCode).toBe(401);
    expect((await get("10.0.0.3", as("reader"))).statusCode).toBe(200);
    await time.advance(30_000);
    expect((await get("10.0.0.1", as("reader"))).headers["retry-after"]).toBe("30");
    await time.advance(30_000);
    expect((await get("10.0.0.1", as("reader"))).statusCode).toBe(200);
  });

  it("A2 a tokens file its group or others may write is refused at start (TOKENS_FILE_WRITABLE); 0600 and 0644 load", async () => {
    const dir = await mkdtemp(join(tmpdir(), "holdfast-tokens-"));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const file = join(dir, "tokens.json");
    await writeFile(file, JSON.stringify(TOKEN_ENTRIES));
    for (const mode of [0o666, 0o622, 0o602, 0o620]) {
      await chmod(file, mode);
      await expect(loadTokens(file), mode.toString(8)).rejects.toMatchObject({
        kind: "invalid-input",
        code: TOKENS_FILE_WRITABLE,
      });
    }
    for (const mode of [0o600, 0o644, 0o400]) {
      await chmod(file, mode);
      expect(await loadTokens(file)).toHaveLength(TOKEN_ENTRIES.length);
    }
  });

  it("A3 a token revoked on the store is refused by every running replica once it re-reads the list, without a restart", async () => {
    const store = await dataset();
    const times = [new FakeTime(), new FakeTime()];
    const replicas = [];
    for (const time of times) {
      const app = await testServer([{ name: "ds", store }], {
        revocationRefreshMs: 5_000,
        context: { clock: time },
      });
      cleanups.push(() => app.close());
      replicas.push(app);
    }
    for (const app of replicas) {
      expect((await app.inject({ url: "/v1/datasets", headers: as("reader") })).statusCode).toBe(
        200,
      );
    }
    const reader = TOKEN_ENTRIES.find((t) => t.role === "reader")!;
    expect(await revokeToken(createContext(store), reader)).toMatchObject({
      alreadyRevoked: false,
    });
    expect(await revokeToken(createContext(store), reader)).toMatchObject({ alreadyRevoked: true });
    for (const time of times) await time.advance(5_000);
    for (const app of replicas) {
      const refused = await app.inject({ url: "/v1/datasets", headers: as("reader") });
      expect(refused.statusCode).toBe(401);
      expect(ProblemShape.parse(refused.json()).detail).toContain("revoked");
      // The other tokens still pass.
      expect((await app.inject({ url: "/v1/datasets", headers: as("writer") })).statusCode).toBe(
        200,
      );
    }
    // A replica started later refuses it from its first request.
    const later = await testServer([{ name: "ds", store }]);
    cleanups.push(() => later.close());
    expect((await later.inject({ url: "/v1/datasets", headers: as("reader") })).statusCode).toBe(
      401,
    );
  });

  it("A4 while the revoked tokens cannot be read, authenticated routes fail closed (503 problem); public ones answer", async () => {
    const store = await dataset();
    const unreadable = new FaultStore(store).on(
      {
        operation: "list",
        key: (prefix) => prefix.startsWith(REVOKED_TOKENS_PREFIX),
        times: Number.POSITIVE_INFINITY,
      },
      { type: "refuse", kind: "refused" },
    );
    const app = await testServer([{ name: "ds", store: unreadable }]);
    cleanups.push(() => app.close());
    const res = await app.inject({ url: "/v1/datasets", headers: as("reader") });
    expect(res.statusCode, res.body).toBe(503);
    expect(ProblemShape.parse(res.json())).toMatchObject({ code: "REVOCATIONS_UNREADABLE" });
    expect((await app.inject({ url: "/healthz" })).statusCode).toBe(200);
  });
});
