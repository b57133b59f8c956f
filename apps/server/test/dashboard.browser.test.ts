import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { createLocalStore } from "@holdfast/backends-local";
import { listRunHistory } from "@holdfast/cleanup";
import type { ObjectStore } from "@holdfast/conditional-store";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ZodApp } from "../src/index.js";
import { type LanceSite, localLanceSite, writeLanceTable } from "./lance.js";
import { as, TOKENS, testServer } from "./support.js";

// The dashboard in a real browser: Debian's Chromium (tooling/services/chromium-install.sh)
// driven by playwright-core, on the demo dataset `holdfast demo` builds and on a table
// LanceDB wrote. Each view is asserted in the DOM and saved as a screenshot in
// apps/server/test-artifacts/ (ignored by git).
const CHROMIUM = process.env.HOLDFAST_CHROMIUM ?? "/usr/bin/chromium";
const WEB = fileURLToPath(new URL("../dist/web", import.meta.url));
const CLI = fileURLToPath(new URL("../../cli/dist/bin.js", import.meta.url));
const ARTIFACTS = fileURLToPath(new URL("../test-artifacts", import.meta.url));
const run = promisify(execFile);

// A page answers when the server has: polls wait as long as a loaded machine needs (tests
// check behaviour, never time).
const POLL = { timeout: 60_000 };

async function cli(args: string[]): Promise<Record<string, unknown>> {
  const { stdout } = await run(process.execPath, [CLI, ...args, "--json"], {
    timeout: 180_000,
    maxBuffer: 64 * 1024 * 1024,
    env: { ...process.env, NO_COLOR: "1" },
  });
  const lines = stdout.trim().split("\n");
  return JSON.parse(lines[lines.length - 1]!) as Record<string, unknown>;
}

async function launch(): Promise<Browser> {
  if (!existsSync(CHROMIUM))
    throw new Error(`no Chromium at ${CHROMIUM}: bash tooling/services/chromium-install.sh`);
  if (!existsSync(WEB)) throw new Error(`no built dashboard at ${WEB}: run pnpm turbo run build`);
  if (!existsSync(CLI)) throw new Error(`no built CLI at ${CLI}: run pnpm turbo run build`);
  await mkdir(ARTIFACTS, { recursive: true });
  return chromium.launch({
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
}

/** Rows of a table as arrays of cell texts. */
async function rows(page: Page, selector: string): Promise<string[][]> {
  return page.$$eval(`${selector} tbody tr`, (trs) =>
    trs.map((tr) => [...tr.querySelectorAll("td")].map((td) => td.textContent ?? "")),
  );
}

/** Signs in with a token and waits for the first view. */
async function signIn(page: Page, token: string): Promise<void> {
  await page.fill("#token", token);
  await page.click("#connect button");
  await expect.poll(() => page.textContent("#status"), POLL).toContain("timeline loaded");
}

async function view(page: Page, name: string): Promise<void> {
  await page.click(`nav button[data-view=${name}]`);
  await expect.poll(() => page.textContent("#status"), POLL).toContain(`${name} loaded`);
}

/** Waits (outside a test: in a hook) until the store's run history holds a run by `trigger`. */
async function waitForRun(store: ObjectStore, trigger: string): Promise<void> {
  const deadline = Date.now() + POLL.timeout;
  for (;;) {
    const triggers = (await listRunHistory(store)).map((r) => r.trigger);
    if (triggers.includes(trigger)) return;
    if (Date.now() > deadline) throw new Error(`no run by ${trigger} on the store: ${triggers}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

describe("dashboard in Chromium: the demo dataset", () => {
  let work: string;
  let store: ObjectStore;
  let app: ZodApp;
  let url: string;
  let browser: Browser;
  let page: Page;
  const shot = (name: string) =>
    page.screenshot({ path: join(ARTIFACTS, `demo-${name}.png`), fullPage: true });

  beforeAll(async () => {
    browser = await launch();
    work = await mkdtemp(join(tmpdir(), "holdfast-dashboard-demo-"));
    const dir = join(work, "ds");
    // The README's demo (tooling/scripts/demo.sh): versions, tags v1.0 and stable, branch
    // experiment, a reader's lease, and a cleanup run by the CLI (its summary stays on the store).
    const demo = await cli(["demo", dir, "--versions", "60"]);
    expect(demo).toMatchObject({ ok: true, command: "demo" });
    // A reader that names itself.
    const lease = await cli([
      "lease",
      "acquire",
      dir,
      "55",
      "--ttl",
      "10m",
      "--holder",
      "nightly-report",
    ]);
    expect(lease).toMatchObject({ lease: { holder: "nightly-report", version: 55 } });
    store = createLocalStore({ root: dir });
    // Another replica's schedule runs a recovery: its summary is on the store, not in this
    // replica's memory.
    const scheduler = await testServer([{ name: "ds", store }], {
      schedules: [{ dataset: "ds", recover: { when: { everyMs: 1000 } } }],
    });
    try {
      await waitForRun(store, "schedule");
    } finally {
      await scheduler.close();
    }
    app = await testServer([{ name: "ds", store }], { dashboardDir: WEB });
    url = await app.listen({ host: "127.0.0.1", port: 0 });
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  }, 300_000);
  afterAll(async () => {
    await browser?.close();
    await app?.close();
    if (work) await rm(work, { recursive: true, force: true });
  });

  it("without a token, the landing page says what a token is, how to make one and where to paste it", async () => {
    await page.goto(url);
    await expect.poll(() => page.textContent("#status"), POLL).toContain("Not signed in");
    const landing = (await page.textContent("#signin")) ?? "";
    expect(await page.isVisible("#signin")).toBe(true);
    expect(await page.isVisible("#app")).toBe(false);
    expect(landing).toContain("holdfast token create --role reader");
    expect(landing).toContain("token");
    expect(landing).toMatch(/Paste the token into the Token field/);
    await shot("0-landing");
  });

  it("a wrong token is refused on screen and the landing page stays", async () => {
    await page.fill("#token", "hf_wrong");
    await page.click("#connect button");
    await expect.poll(() => page.textContent("#status"), POLL).toContain("401");
    expect(await page.textContent("#status")).toContain("not known to the server");
    expect(await page.isVisible("#signin")).toBe(true);
    await shot("1-refused");
  });

  it("timeline: per branch, versions as ranges with their state, not one row per version", async () => {
    await signIn(page, TOKENS.reader);
    expect(await page.isVisible("#signin")).toBe(false);
    expect(await page.locator("#chart canvas").count()).toBeGreaterThan(0);
    const table = await rows(page, "#timeline-table");
    // 60 versions on main plus the branch's: a few ranges.
    expect(table.length).toBeLessThan(20);
    const byState = (branch: string, state: string) =>
      table.filter((r) => r[0] === branch && r[3] === state);
    // The demo's cleanup retired runs of old versions between the pinned ones: each run of
    // them is one range, gone from the store.
    const retired = byState("main", "retired");
    expect(retired.length).toBeGreaterThan(1);
    expect(retired.some((r) => /^\d+–\d+$/.test(r[1]!) && Number(r[2]) >= 10)).toBe(true);
    expect(retired.reduce((n, r) => n + Number(r[2]), 0)).toBeGreaterThan(30);
    // Tags and the lease show as their own ranges.
    expect(
      byState("main", "tagged")
        .map((r) => r[4])
        .join(" "),
    ).toMatch(/v1\.0/);
    expect(
      byState("main", "tagged")
        .map((r) => r[4])
        .join(" "),
    ).toMatch(/stable/);
    expect(byState("main", "leased").map((r) => r[1])).toContain("55");
    expect(byState("main", "kept").length).toBeGreaterThan(0);
    expect(table.some((r) => r[0] === "experiment")).toBe(true);
    // Every row is a range whose count matches its bounds.
    for (const r of table) {
      const [from, to] = r[1]!.replaceAll(",", "").split("–").map(Number);
      expect(Number(r[2])).toBe((to ?? from!) - from! + 1);
    }
    await shot("2-timeline");
  });

  it("bytes used and freed show on every view", async () => {
    const usage = (await page.textContent("#usage")) ?? "";
    expect(usage).toMatch(/Stored: [\d.]+ (B|kB|MB) in [\d,]+ objects/);
    expect(usage).toMatch(/Freed: [\d.]+ (B|kB|MB) by the last \d+ cleanup runs? on record/);
    expect(usage).not.toMatch(/Freed: 0 B/);
  });

  it("leases: the holder's label, the version and the storage time left", async () => {
    await view(page, "leases");
    const table = await rows(page, "#leases-table");
    const mine = table.find((r) => r[0] === "nightly-report");
    expect(mine, JSON.stringify(table)).toBeDefined();
    expect(mine![1]).toBe("main@55");
    // Taken for 10 minutes a moment ago: between 5 and 10 minutes left.
    expect(mine![2]).toMatch(/^(9|8|7|6|5) min( \d+ s)?$|^10 min$/);
    expect(mine![3]).toBe("10 min");
    await shot("3-leases");
  });

  it("cleanup: runs from the CLI and a schedule (from the store), a plan as ranges with every reason, a job", async () => {
    await view(page, "cleanup");
    const runs = await rows(page, "#runs-table");
    const triggers = runs.map((r) => r[1]);
    expect(triggers).toContain("cli");
    // Another replica's scheduled job: its summary names the job.
    expect(triggers.some((t) => /^schedule \(job [0-9A-Z]{26}\)$/.test(t!))).toBe(true);
    const cliRun = runs.find((r) => r[1] === "cli")!;
    expect(cliRun[2]).toBe("cleanup");
    expect(cliRun[3]).toBe("succeeded");
    expect(cliRun[4]).toMatch(/main \d+–\d+/);
    expect(cliRun[6]).toMatch(/[\d.]+ (B|kB|MB)/);
    expect(cliRun[6]).not.toBe("0 B");
    expect(await page.textContent("#runs-summary")).toMatch(/freed [\d.]+ (B|kB|MB)/);
    await shot("4-runs");
  });

  it("the plan groups versions into ranges, each with its reasons", async () => {
    // Planning takes an admin token: sign in again as admin.
    await page.evaluate("sessionStorage.clear()");
    await page.goto(url);
    await signIn(page, TOKENS.admin);
    await view(page, "cleanup");
    await page.fill("#retain", "5");
    await page.fill("#min-age", "0");
    await page.click("#plan");
    await expect.poll(() => page.textContent("#plan-summary"), POLL).toContain("Would retire");
    const plan = await rows(page, "#plan-table");
    const retire = plan.filter((r) => r[3] === "retire");
    expect(retire.length).toBeGreaterThan(0);
    // Consecutive retired versions are one row.
    expect(retire.some((r) => Number(r[2]) > 1 && /–/.test(r[1]!))).toBe(true);
    const reasons = plan.filter((r) => r[3] === "keep").map((r) => r[4]);
    expect(reasons.some((r) => r!.includes("lease"))).toBe(true);
    expect(reasons.some((r) => r!.includes("tag"))).toBe(true);
    expect(reasons.some((r) => r!.includes("latest") || r!.includes("policy"))).toBe(true);
    // Far fewer rows than versions.
    const versions = plan.reduce((n, r) => n + Number(r[2]), 0);
    expect(plan.length).toBeLessThan(versions);
    await shot("5-plan");
  });

  it("a cleanup run from the dashboard is a job and joins the runs on the store", async () => {
    await page.click("#run");
    await expect
      .poll(() => page.textContent("#progress"), { timeout: 120_000 })
      .toMatch(/succeeded, retired \d+, freed [\d.]+ (B|kB|MB)/);
    await expect
      .poll(async () => (await rows(page, "#runs-table")).map((r) => r[1]).join(" "), POLL)
      .toMatch(/api \(job [0-9A-Z]{26}\)/);
    expect((await rows(page, "#jobs-table")).some((r) => r[3] === "succeeded")).toBe(true);
    await shot("6-cleanup-done");
  });

  it("store: capabilities in words, clock skew in one sentence, space by area, the doctor", async () => {
    await view(page, "store");
    const skew = (await page.textContent("#skew")) ?? "";
    expect(skew).toMatch(
      /^The store clock (is \d+\.\d s (ahead of|behind) this server|agrees with this server's)/,
    );
    const store = await rows(page, "#store-table");
    const text = store.map((r) => r.join(" ")).join("\n");
    expect(text).toContain("Atomic compare-and-swap");
    expect(text).toContain("Timestamps are precise to");
    expect(text).not.toMatch(/atomicConditionalUpdate|timestampPrecisionMs|etagIsContentHash/);
    expect(store.find((r) => r[0] === "Clock")?.[1]).toBe(skew);
    const areas = await rows(page, "#areas-table");
    expect(areas.map((r) => r[0])).toEqual(expect.arrayContaining(["data", "_versions"]));
    await expect.poll(() => page.textContent("#checks-table"), POLL).toContain("create-only");
    await shot("7-store");
  });
});

describe("dashboard in Chromium: a table LanceDB wrote", () => {
  let site: LanceSite;
  let store: ObjectStore;
  let app: ZodApp;
  let url: string;
  let browser: Browser;
  let page: Page;
  const shot = (name: string) =>
    page.screenshot({ path: join(ARTIFACTS, `lance-${name}.png`), fullPage: true });

  beforeAll(async () => {
    browser = await launch();
    site = await localLanceSite();
    // main 1-7, LanceDB's tag lance-2 on 2, LanceDB's branch dev forked at 3.
    await writeLanceTable(site);
    store = await site.store();
    const table = join(site.uri, "events.lance");
    // The CLI cleans the table (keeps 3 newest; the tag keeps 2, the branch keeps 3).
    const cleaned = await cli(["cleanup", table, "--retain", "3", "--min-age", "0"]);
    expect(cleaned).toMatchObject({ ok: true, command: "cleanup" });
    await waitForRun(store, "cli");
    app = await testServer([{ name: "events", store }], { dashboardDir: WEB });
    const held = await app.inject({
      method: "POST",
      url: "/v1/datasets/events/leases",
      headers: as("reader"),
      payload: { version: 6, ttlMs: 600_000, holder: "lance-reader · etl" },
    });
    expect(held.statusCode, held.body).toBe(201);
    expect(held.json()).toMatchObject({ handle: { holder: "lance-reader · etl" } });
    url = await app.listen({ host: "127.0.0.1", port: 0 });
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  }, 300_000);
  afterAll(async () => {
    await browser?.close();
    await app?.close();
    await site?.dispose();
  });

  it("landing page, then the timeline: Lance's versions as ranges (retired, tagged, leased, kept) and its branch", async () => {
    await page.goto(url);
    expect(await page.textContent("#signin")).toContain("holdfast token create");
    await shot("0-landing");
    await signIn(page, TOKENS.admin);
    const table = await rows(page, "#timeline-table");
    const main = table.filter((r) => r[0] === "main");
    expect(main.map((r) => `${r[1]} ${r[3]}`)).toEqual([
      "1 retired",
      "2 tagged",
      "3 kept",
      "4 retired",
      "5 kept",
      "6 leased",
      "7 kept",
    ]);
    expect(main.find((r) => r[3] === "tagged")?.[4]).toContain("lance-2");
    const dev = table.filter((r) => r[0] === "dev");
    expect(dev.length).toBeGreaterThan(0);
    expect(dev[0]![6]).toBe("main@3");
    expect(dev.some((r) => r[3] === "retired")).toBe(false);
    expect(await page.textContent("#usage")).toMatch(
      /Stored: [\d.]+ (kB|MB) .*Freed: [\d.]+ (B|kB|MB)/,
    );
    await shot("1-timeline");
  });

  it("leases: holder, version, time left", async () => {
    await view(page, "leases");
    const table = await rows(page, "#leases-table");
    expect(table[0]?.slice(0, 2)).toEqual(["lance-reader · etl", "main@6"]);
    expect(table[0]?.[2]).toMatch(/min/);
    await shot("2-leases");
  });

  it("cleanup: the CLI's run from the store, and a plan as ranges with reasons", async () => {
    await view(page, "cleanup");
    const runs = await rows(page, "#runs-table");
    expect(runs[0]?.[1]).toBe("cli");
    expect(runs[0]?.[4]).toMatch(/main 1/);
    expect(runs[0]?.[6]).not.toBe("0 B");
    await page.fill("#retain", "1");
    await page.fill("#min-age", "0");
    await page.click("#plan");
    await expect.poll(() => page.textContent("#plan-summary"), POLL).toContain("Would retire");
    const plan = await rows(page, "#plan-table");
    const why = plan.map((r) => `${r[0]} ${r[1]} ${r[3]} ${r[4]}`).join("\n");
    expect(why).toMatch(/main 2 keep .*tag/);
    expect(why).toMatch(/main 6 keep .*lease/);
    expect(why).toMatch(/main 3 keep .*branch-lineage/);
    await shot("3-plan");
  });

  it("store: capabilities in words and the clock in one sentence", async () => {
    await view(page, "store");
    expect(await page.textContent("#skew")).toMatch(/^The store clock /);
    const text = (await rows(page, "#store-table")).map((r) => r.join(" ")).join("\n");
    expect(text).toContain("Atomic conditional delete");
    expect(text).not.toMatch(/atomicConditional/);
    const areas = (await rows(page, "#areas-table")).map((r) => r[0]);
    expect(areas).toEqual(expect.arrayContaining(["data", "_versions", "_holdfast"]));
    await shot("4-store");
  });
});
