import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ZodApp } from "../src/index.js";
import { as, freshStore, seedDataset, TOKENS, testServer } from "./support.js";

const SCRIPT = fileURLToPath(new URL("../examples/lease_client.py", import.meta.url));

describe("Python client (standard library only) against a live server", () => {
  let app: ZodApp;
  let url: string;
  let dispose: () => Promise<void>;

  beforeAll(async () => {
    const fresh = await freshStore("local");
    dispose = fresh.dispose;
    await seedDataset(fresh.store, 2);
    app = await testServer([{ name: "ds", store: fresh.store }]);
    url = await app.listen({ host: "127.0.0.1", port: 0 });
  });
  afterAll(async () => {
    await app?.close();
    await dispose?.();
  });

  it("takes a lease, renews it while reading, releases it", async () => {
    const child = spawn(
      "python3",
      [
        SCRIPT,
        "--url",
        url,
        "--dataset",
        "ds",
        "--version",
        "1",
        "--ttl-ms",
        "6000",
        "--reads",
        "6",
      ],
      { env: { ...process.env, HOLDFAST_TOKEN: TOKENS.reader } },
    );
    let out = "";
    let err = "";
    let sawLease = false;
    child.stdout.on("data", async (chunk: Buffer) => {
      out += chunk.toString();
      if (!sawLease && out.includes('"read"')) {
        sawLease = true;
        // While the client reads, the server lists its lease as active.
        const leases = (
          await app.inject({ url: "/v1/datasets/ds/leases", headers: as("reader") })
        ).json();
        expect(leases.leases).toEqual([expect.objectContaining({ version: 1, active: true })]);
      }
    });
    child.stderr.on("data", (chunk: Buffer) => {
      err += chunk.toString();
    });
    const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
    expect(code, err).toBe(0);
    const events = out
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { event: string; renewals?: number });
    expect(events[0]?.event).toBe("acquired");
    expect(events.filter((e) => e.event === "read")).toHaveLength(6);
    expect(events.filter((e) => e.event === "renewed").length).toBeGreaterThanOrEqual(2);
    expect(events.at(-1)).toMatchObject({ event: "released" });
    expect(sawLease).toBe(true);
    const after = (
      await app.inject({ url: "/v1/datasets/ds/leases", headers: as("reader") })
    ).json();
    expect(after.leases).toEqual([]);
  });
});
