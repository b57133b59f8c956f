import { existsSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ZodApp } from "../src/index.js";
import { as, freshStore, seedDataset, TOKENS, testServer } from "./support.js";

// The dashboard in a real browser: Debian's Chromium (tooling/scripts/test.sh installs it)
// driven by playwright-core. Screenshots go to apps/server/test-artifacts/.
const CHROMIUM = process.env.HOLDFAST_CHROMIUM ?? "/usr/bin/chromium";
const WEB = fileURLToPath(new URL("../dist/web", import.meta.url));
const ARTIFACTS = fileURLToPath(new URL("../test-artifacts", import.meta.url));

// A page answers when the server has: polls wait as long as a loaded machine needs (tests
// check behaviour, never time).
const POLL = { timeout: 30_000 };
describe("dashboard in Chromium", () => {
  let app: ZodApp;
  let url: string;
  let browser: Browser;
  let page: Page;
  let dispose: () => Promise<void>;
  let leaseId: string;

  beforeAll(async () => {
    if (!existsSync(CHROMIUM))
      throw new Error(`no Chromium at ${CHROMIUM}: apt-get install -y chromium`);
    if (!existsSync(WEB)) throw new Error(`no built dashboard at ${WEB}: run pnpm turbo run build`);
    await mkdir(ARTIFACTS, { recursive: true });
    const fresh = await freshStore("local");
    dispose = fresh.dispose;
    await seedDataset(fresh.store, 6);
    app = await testServer([{ name: "ds", store: fresh.store }], { dashboardDir: WEB });
    const post = (path: string, payload: object, role: "reader" | "writer") =>
      app.inject({ method: "POST", url: `/v1/datasets/ds${path}`, headers: as(role), payload });
    await post("/tags", { name: "gold", version: 2 }, "writer");
    await post("/branches", { name: "exp", from: { version: 3 } }, "writer");
    leaseId = (await post("/leases", { version: 4, ttlMs: 600_000 }, "reader")).json().handle
      .leaseId;
    url = await app.listen({ host: "127.0.0.1", port: 0 });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
      ],
    });
    page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
  });
  afterAll(async () => {
    await browser?.close();
    await app?.close();
    await dispose?.();
  });

  const shot = (name: string) =>
    page.screenshot({ path: `${ARTIFACTS}/${name}.png`, fullPage: true });

  it("a wrong token is refused on screen", async () => {
    await page.goto(url);
    await page.fill("#token", "hf_wrong");
    await page.click("#connect button");
    await expect.poll(() => page.textContent("#status"), POLL).toContain("401");
    await shot("0-refused");
  });

  it("timeline: versions by branch with tags, leases and the fork", async () => {
    await page.fill("#token", TOKENS.admin);
    await page.click("#connect button");
    await expect.poll(() => page.textContent("#status"), POLL).toContain("timeline loaded");
    expect(await page.locator("#chart canvas").count()).toBeGreaterThan(0);
    const rows = await page.locator("#timeline-table tbody tr").allTextContents();
    expect(rows).toHaveLength(6);
    expect(rows.find((r) => r.startsWith("main2"))).toContain("gold");
    expect(rows.find((r) => r.startsWith("main4"))).toContain("leased");
    expect(await page.inputValue("#dataset")).toBe("ds");
    await shot("1-timeline");
  });

  it("leases: the active lease with its expiry", async () => {
    await page.click("nav button[data-view=leases]");
    await expect.poll(() => page.textContent("#leases-table"), POLL).toContain(leaseId);
    const row = await page.locator("#leases-table tbody tr").first().textContent();
    expect(row).toContain("main@4");
    expect(row).toContain("active");
    await shot("2-leases");
  });

  it("cleanup: a plan with reasons, then a run with live progress", async () => {
    await page.click("nav button[data-view=cleanup]");
    await page.fill("#retain", "2");
    await page.fill("#min-age", "0");
    await page.click("#plan");
    await expect.poll(() => page.textContent("#plan-summary"), POLL).toContain("Would retire");
    const plan = await page.textContent("#plan-table");
    expect(plan).toContain("keep: lease");
    expect(plan).toContain("keep: tag");
    expect(plan).toContain("keep: branch-lineage");
    await shot("3-plan");
    await page.click("#run");
    await expect
      .poll(() => page.textContent("#progress"), { timeout: 60_000 })
      .toMatch(/succeeded, retired 1/);
    await expect.poll(() => page.textContent("#jobs-table"), POLL).toContain("succeeded");
    await shot("4-cleanup-done");
  });

  it("store: capabilities, clock skew and the doctor's checks", async () => {
    await page.click("nav button[data-view=store]");
    await expect
      .poll(() => page.textContent("#checks-table"), { timeout: 30_000 })
      .toContain("create-only");
    const store = await page.textContent("#store-table");
    expect(store).toContain("timestampPrecisionMs");
    expect(store).toContain("clock skew");
    await shot("5-store");
  });
});
