import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createLocalStore } from "@holdfast/backends-local";
import { createContext } from "@holdfast/protocol";
import { acquireCleanupLock } from "@holdfast/retirement";
import { buildServer, hashToken, type ZodApp } from "@holdfast/server";
import * as lancedb from "@lancedb/lancedb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { run } from "./run.js";

// One table drives both apps: every failure of an operation the CLI and the HTTP API both
// offer must come back with the same error kind and code through either (the operations
// live in the packages; the apps parse, call and print).

const TOKEN = "hf_same_errors_admin_token";
const OTHER_LEASE = "01J9Z3K4V6W8X0Y2Z4A6B8C0D2";

interface Fixture {
  /** The dataset's path, as the CLI takes it. */
  readonly ds: string;
  /** A local file to commit. */
  readonly file: string;
  /** A real lease's handle (acquired through the CLI). */
  readonly handle: Handle;
  /** The handle of a lease removed since (`lease release --force`). */
  readonly lost: Handle;
  /** Handles of two leases whose term ran out in storage time: one for each app. */
  readonly expired: { readonly cli: Handle; readonly http: Handle };
  /** An empty directory: no dataset (served as `empty`). */
  readonly empty: string;
  /** A Lance table LanceDB wrote (served as `lance`). */
  readonly lance: string;
  /** A dataset whose cleanup lock another (live) cleaner holds (served as `busy`). */
  readonly busy: string;
}

type Handle = Record<string, unknown> & { leaseId: string };

interface Row {
  readonly failure: string;
  readonly cli: (f: Fixture) => string[];
  readonly http: (f: Fixture) => {
    method: "GET" | "POST" | "PUT" | "DELETE";
    url: string;
    payload?: unknown;
  };
  readonly kind: string;
  readonly code: string | undefined;
}

const D = "/v1/datasets/ds";
const renewUrl = (h: Handle) => `${D}/leases/${h.leaseId}/renew`;

const ROWS: readonly Row[] = [
  {
    failure: "a lease on a version that does not exist",
    cli: (f) => ["lease", "acquire", f.ds, "99", "--ttl", "60s"],
    http: () => ({ method: "POST", url: `${D}/leases`, payload: { version: 99, ttlMs: 60_000 } }),
    kind: "not-found",
    code: "VERSION_NOT_FOUND",
  },
  {
    failure: "invariant 1: a release with a handle forged from the listing (made-up secret)",
    cli: (f) => [
      "lease",
      "release",
      f.ds,
      "--handle",
      JSON.stringify({ ...f.handle, secret: "A".repeat(43) }),
    ],
    http: (f) => ({
      method: "POST",
      url: `${D}/leases/${f.handle.leaseId}/release`,
      payload: { handle: { ...f.handle, secret: "A".repeat(43) } },
    }),
    kind: "invalid-input",
    code: "INVALID_LEASE_HANDLE",
  },
  {
    failure: "invariant 1: a release with a handle whose key names another object",
    cli: (f) => [
      "lease",
      "release",
      f.ds,
      "--handle",
      JSON.stringify({ ...f.handle, key: "_holdfast/identity.json" }),
    ],
    http: (f) => ({
      method: "POST",
      url: `${D}/leases/${f.handle.leaseId}/release`,
      payload: { handle: { ...f.handle, key: "_holdfast/identity.json" } },
    }),
    kind: "invalid-input",
    code: "INVALID_LEASE_HANDLE",
  },
  {
    failure: "a release naming another lease than its handle's",
    cli: (f) => ["lease", "release", f.ds, OTHER_LEASE, "--handle", JSON.stringify(f.handle)],
    http: (f) => ({
      method: "POST",
      url: `${D}/leases/${OTHER_LEASE}/release`,
      payload: { handle: f.handle },
    }),
    kind: "invalid-input",
    code: "INVALID_LEASE_HANDLE",
  },
  {
    failure: "a commit to a branch that does not exist (the first commit's fork rule)",
    cli: (f) => ["commit", f.ds, f.file, "--branch", "nope"],
    http: () => ({ method: "POST", url: `${D}/versions`, payload: { branch: "nope", files: [] } }),
    kind: "not-found",
    code: "BRANCH_NOT_FOUND",
  },
  {
    failure: "a tag on a version that does not exist",
    cli: (f) => ["tag", "create", f.ds, "t99", "99"],
    http: () => ({ method: "POST", url: `${D}/tags`, payload: { name: "t99", version: 99 } }),
    kind: "not-found",
    code: "VERSION_NOT_FOUND",
  },
  {
    failure: "a tag that already exists",
    cli: (f) => ["tag", "create", f.ds, "keep", "2"],
    http: () => ({ method: "POST", url: `${D}/tags`, payload: { name: "keep", version: 2 } }),
    kind: "conflict",
    code: "REF_EXISTS",
  },
  {
    failure: "moving a tag that does not exist",
    cli: (f) => ["tag", "update", f.ds, "nope", "1"],
    http: () => ({ method: "PUT", url: `${D}/tags/nope`, payload: { version: 1 } }),
    kind: "not-found",
    code: "REF_NOT_FOUND",
  },
  {
    failure: "deleting a tag that does not exist",
    cli: (f) => ["tag", "delete", f.ds, "nope"],
    http: () => ({ method: "DELETE", url: `${D}/tags/nope` }),
    kind: "not-found",
    code: "REF_NOT_FOUND",
  },
  {
    failure: "a branch that already exists",
    cli: (f) => ["branch", "create", f.ds, "bare", "--from", "1"],
    http: () => ({
      method: "POST",
      url: `${D}/branches`,
      payload: { name: "bare", from: { version: 1 } },
    }),
    kind: "conflict",
    code: "REF_EXISTS",
  },
  {
    failure: "re-creating a branch that has versions of its own",
    cli: (f) => ["branch", "create", f.ds, "exp", "--from", "1"],
    http: () => ({
      method: "POST",
      url: `${D}/branches`,
      payload: { name: "exp", from: { version: 1 } },
    }),
    kind: "conflict",
    code: "BRANCH_HAS_VERSIONS",
  },
  {
    failure: "a branch forked from a version that does not exist",
    cli: (f) => ["branch", "create", f.ds, "exp2", "--from", "99"],
    http: () => ({
      method: "POST",
      url: `${D}/branches`,
      payload: { name: "exp2", from: { version: 99 } },
    }),
    kind: "not-found",
    code: "VERSION_NOT_FOUND",
  },
  {
    failure: "deleting the default branch",
    cli: (f) => ["branch", "delete", f.ds, "main"],
    http: () => ({ method: "DELETE", url: `${D}/branches/main` }),
    kind: "invalid-input",
    code: "DEFAULT_BRANCH",
  },
  {
    failure: "a cleanup whose orphan grace is below the floor while a writer may be active",
    cli: (f) => ["cleanup", f.ds, "--retain", "1", "--orphan-grace", "1s"],
    http: () => ({
      method: "POST",
      url: `${D}/cleanup/jobs`,
      payload: { policy: { retainVersions: 1, orphanGraceMs: 1000 } },
    }),
    kind: "invalid-input",
    code: "ORPHAN_GRACE_BELOW_FLOOR",
  },
  {
    failure: "invariant 1: a renewal with a handle forged from the listing (made-up secret)",
    cli: (f) => [
      "lease",
      "renew",
      f.ds,
      "--handle",
      JSON.stringify({ ...f.handle, secret: "A".repeat(43) }),
    ],
    http: (f) => ({
      method: "POST",
      url: renewUrl(f.handle),
      payload: { handle: { ...f.handle, secret: "A".repeat(43) } },
    }),
    kind: "invalid-input",
    code: "INVALID_LEASE_HANDLE",
  },
  {
    failure: "a renewal naming another lease than its handle's",
    cli: (f) => ["lease", "renew", f.ds, OTHER_LEASE, "--handle", JSON.stringify(f.handle)],
    http: (f) => ({
      method: "POST",
      url: `${D}/leases/${OTHER_LEASE}/renew`,
      payload: { handle: f.handle },
    }),
    kind: "invalid-input",
    code: "INVALID_LEASE_HANDLE",
  },
  {
    failure: "docs/protocol.md §4.2: renewing a lease that was removed (lost)",
    cli: (f) => ["lease", "renew", f.ds, "--handle", JSON.stringify(f.lost)],
    http: (f) => ({ method: "POST", url: renewUrl(f.lost), payload: { handle: f.lost } }),
    kind: "not-found",
    code: "LEASE_LOST",
  },
  {
    failure: "L3: renewing a lease whose term ran out in storage time (expired)",
    cli: (f) => ["lease", "renew", f.ds, "--handle", JSON.stringify(f.expired.cli)],
    http: (f) => ({
      method: "POST",
      url: renewUrl(f.expired.http),
      payload: { handle: f.expired.http },
    }),
    kind: "refused",
    code: "LEASE_EXPIRED",
  },
  {
    failure: "a lease with a TTL below the minimum",
    cli: (f) => ["lease", "acquire", f.ds, "1", "--ttl", "50ms"],
    http: () => ({ method: "POST", url: `${D}/leases`, payload: { version: 1, ttlMs: 50 } }),
    kind: "invalid-input",
    code: "INVALID_TTL",
  },
  {
    failure: "a lease on a branch that does not exist",
    cli: (f) => ["lease", "acquire", f.ds, "1", "--branch", "nope", "--ttl", "60s"],
    http: () => ({
      method: "POST",
      url: `${D}/leases`,
      payload: { branch: "nope", version: 1, ttlMs: 60_000 },
    }),
    kind: "not-found",
    code: "VERSION_NOT_FOUND",
  },
  {
    failure: "a tag whose name is not a valid name",
    cli: (f) => ["tag", "create", f.ds, ".bad", "1"],
    http: () => ({ method: "POST", url: `${D}/tags`, payload: { name: ".bad", version: 1 } }),
    kind: "invalid-input",
    code: "INVALID_NAME",
  },
  {
    failure: "a tag on version 0 (versions start at 1)",
    cli: (f) => ["tag", "create", f.ds, "t0", "0"],
    http: () => ({ method: "POST", url: `${D}/tags`, payload: { name: "t0", version: 0 } }),
    kind: "invalid-input",
    code: "INVALID_VERSION",
  },
  {
    failure: "invariant 1: a renewal with a handle whose fields are malformed",
    cli: (f) => [
      "lease",
      "renew",
      f.ds,
      "--handle",
      JSON.stringify({ ...f.handle, branch: ".bad", ttlMs: 5 }),
    ],
    http: (f) => ({
      method: "POST",
      url: renewUrl(f.handle),
      payload: { handle: { ...f.handle, branch: ".bad", ttlMs: 5 } },
    }),
    kind: "invalid-input",
    code: "INVALID_LEASE_HANDLE",
  },
  {
    failure: "a branch whose name is not a valid name",
    cli: (f) => ["branch", "create", f.ds, ".bad", "--from", "1"],
    http: () => ({
      method: "POST",
      url: `${D}/branches`,
      payload: { name: ".bad", from: { version: 1 } },
    }),
    kind: "invalid-input",
    code: "INVALID_NAME",
  },
  {
    failure: "deleting a branch whose versions leases pin (without force)",
    cli: (f) => ["branch", "delete", f.ds, "exp"],
    http: () => ({ method: "DELETE", url: `${D}/branches/exp` }),
    kind: "conflict",
    code: "BRANCH_HAS_LEASES",
  },
  {
    failure: "docs/protocol.md §5.9: a recovery while another cleaner holds the dataset's lock",
    cli: (f) => ["recover", f.busy, "--no-wait"],
    http: () => ({ method: "POST", url: "/v1/datasets/busy/recover" }),
    kind: "conflict",
    code: "CLEANUP_RUNNING",
  },
  {
    failure: "docs/protocol.md §5.9: a cleanup while another cleaner holds the dataset's lock",
    cli: (f) => ["cleanup", f.busy, "--retain", "1"],
    http: () => ({
      method: "POST",
      url: "/v1/datasets/busy/cleanup/jobs",
      payload: { policy: { retainVersions: 1 } },
    }),
    kind: "conflict",
    code: "CLEANUP_RUNNING",
  },
  {
    failure: "a commit into a Lance table (LanceDB writes it)",
    cli: (f) => ["commit", f.lance, f.file],
    http: () => ({ method: "POST", url: "/v1/datasets/lance/versions", payload: { files: [] } }),
    kind: "unsupported",
    code: "FORMAT_READ_ONLY",
  },
  {
    failure: "a tag on a version a Lance table does not have",
    cli: (f) => ["tag", "create", f.lance, "t9", "9"],
    http: () => ({
      method: "POST",
      url: "/v1/datasets/lance/tags",
      payload: { name: "t9", version: 9 },
    }),
    kind: "not-found",
    code: "VERSION_NOT_FOUND",
  },
  {
    failure: "the versions of a location that holds no dataset",
    cli: (f) => ["versions", f.empty],
    http: () => ({ method: "GET", url: "/v1/datasets/empty/versions" }),
    kind: "not-found",
    code: "DATASET_NOT_FOUND",
  },
  {
    failure: "a tag on a location that holds no dataset",
    cli: (f) => ["tag", "create", f.empty, "t1", "1"],
    http: () => ({
      method: "POST",
      url: "/v1/datasets/empty/tags",
      payload: { name: "t1", version: 1 },
    }),
    kind: "not-found",
    code: "DATASET_NOT_FOUND",
  },
];

describe("the CLI and the HTTP API fail the same way", () => {
  let dir: string;
  let fixture: Fixture;
  let app: ZodApp;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "holdfast-same-errors-"));
    const ds = join(dir, "ds");
    const empty = join(dir, "empty");
    await mkdir(empty);
    const db = await lancedb.connect(dir);
    const table = await db.createTable("events", [{ id: 1, v: "a" }]);
    await table.add([{ id: 2, v: "b" }]);
    table.close();
    const lance = join(dir, "events.lance");
    const busy = join(dir, "busy");
    expect((await run(["init", busy])).code).toBe(0);
    // Another cleaner's lock, live for the whole test (its bound is an hour of storage time).
    await acquireCleanupLock(createContext(createLocalStore({ root: busy })), {
      owner: OTHER_LEASE,
      boundMs: 3_600_000,
    });
    const file = join(dir, "part.bin");
    await writeFile(file, "bytes");
    for (const args of [
      ["init", ds],
      ["commit", ds, file],
      ["commit", ds, file],
      ["branch", "create", ds, "exp", "--from", "1"],
      ["branch", "create", ds, "bare", "--from", "1"],
      ["commit", ds, file, "--branch", "exp"],
      ["tag", "create", ds, "keep", "1"],
    ]) {
      expect((await run(args)).code).toBe(0);
    }
    const acquire = async (...args: string[]) => {
      const acquired = await run(["lease", "acquire", ds, ...args, "--json"]);
      expect(acquired.code, acquired.stderr).toBe(0);
      return acquired.json().handle as Handle;
    };
    const handle = await acquire("1", "--ttl", "10m");
    const exp = (await run(["versions", ds, "--branch", "exp", "--json"])).json().versions as {
      version: number;
    }[];
    await acquire(String(exp[0]!.version), "--branch", "exp", "--ttl", "10m");
    const lost = await acquire("2", "--ttl", "10m");
    expect((await run(["lease", "release", ds, lost.leaseId, "--force"])).code).toBe(0);
    const expired = {
      cli: await acquire("2", "--ttl", "100ms"),
      http: await acquire("2", "--ttl", "100ms"),
    };
    // Past TTL + the one-second precision floor of storage time + one second of whole-second
    // truncation of the storage time it is judged at (docs/protocol.md §3): 2.1 s at most.
    await new Promise((resolve) => setTimeout(resolve, 2_600));
    fixture = { ds, file, handle, lost, expired, empty, lance, busy };
    app = await buildServer({
      datasets: [
        { name: "ds", store: createLocalStore({ root: ds }) },
        { name: "empty", store: createLocalStore({ root: empty }) },
        { name: "lance", store: createLocalStore({ root: lance }) },
        { name: "busy", store: createLocalStore({ root: busy }) },
      ],
      tokens: [{ name: "same-errors", role: "admin", sha256: hashToken(TOKEN) }],
      logger: false,
      rateLimit: false,
      failedAuthLimit: false,
      dashboardDir: null,
    });
  });
  afterAll(async () => {
    await app?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it.each(ROWS)("$failure: $kind $code", async (row) => {
    const cli = await run([...row.cli(fixture), "--json"]);
    expect(cli.code, cli.stdout + cli.stderr).not.toBe(0);
    const cliError = cli.json().error as { kind: string; code?: string };
    const request = row.http(fixture);
    const res = await app.inject({
      method: request.method,
      url: request.url,
      headers: { authorization: `Bearer ${TOKEN}` },
      ...(request.payload === undefined ? {} : { payload: request.payload as object }),
    });
    const problem = res.json() as { kind: string; code?: string };
    expect({ cli: pick(cliError), http: pick(problem) }).toEqual({
      cli: { kind: row.kind, code: row.code },
      http: { kind: row.kind, code: row.code },
    });
  });

  it("versions with tags, branch listings, lease listings, status and the doctor's verdict are the same documents", async () => {
    const get = async (url: string) =>
      (
        await app.inject({ method: "GET", url, headers: { authorization: `Bearer ${TOKEN}` } })
      ).json() as Record<string, unknown>;
    const cliVersions = (await run(["versions", fixture.ds, "--json"])).json();
    const httpVersions = await get(`${D}/versions?limit=1000`);
    expect(httpVersions.versions).toEqual(cliVersions.versions);
    expect(cliVersions.versions).toMatchObject([{ version: 1, tags: ["keep"] }, { version: 2 }]);
    // A version without a branch is on the default branch in both (describeLeases).
    const cliLeases = (await run(["lease", "list", fixture.ds, "1", "--json"])).json();
    const httpLeases = await get(`${D}/leases?version=1`);
    const ids = (doc: Record<string, unknown>) =>
      (doc.leases as { leaseId: string; branch: string; version: number }[]).map(
        (l) => `${l.branch}@${l.version}/${l.leaseId}`,
      );
    expect(ids(httpLeases)).toEqual(ids(cliLeases));
    expect(ids(cliLeases)).toEqual([`main@1/${fixture.handle.leaseId}`]);
    const cliStatus = (await run(["status", fixture.ds, "--json"])).json();
    const httpStatus = await get(`${D}/status`);
    const statusSummary = (d: Record<string, unknown>) => ({
      datasetId: d.datasetId,
      defaultBranch: d.defaultBranch,
      format: d.format,
      branches: d.branches,
      tags: d.tags,
      leases: ids(d),
      retirements: d.retirements,
      intents: d.intents,
      warnings: d.warnings,
    });
    expect(statusSummary(httpStatus)).toEqual(statusSummary(cliStatus));
    const cliBranches = (await run(["branch", "list", fixture.ds, "--json"])).json();
    expect((await get(`${D}/branches`)).branches).toEqual(cliBranches.branches);
    const cliDoctor = (await run(["doctor", fixture.ds, "--json"])).json();
    const httpDoctor = await get(`${D}/doctor`);
    const summary = (d: Record<string, unknown>) => ({
      verdict: d.verdict,
      checks: (d.checks as { id: string; status: string }[]).map((c) => [c.id, c.status]),
      guarantees: d.guarantees,
    });
    expect(summary(httpDoctor)).toEqual(summary(cliDoctor));
  });
});

function pick(error: { kind: string; code?: string }): { kind: string; code: string | undefined } {
  return { kind: error.kind, code: error.code };
}
