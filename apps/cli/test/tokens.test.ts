import { chmod, mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createLocalStore } from "@holdfast/backends-local";
import { buildServer, hashToken, loadTokens, REVOKED_TOKENS_PREFIX } from "@holdfast/server";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { run } from "./run.js";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "holdfast-cli-tokens-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("tokens of holdfast serve", () => {
  it("T1 serve refuses a tokens file its group or others may write (exit 2, TOKENS_FILE_WRITABLE) before listening", async () => {
    const ds = join(dir, "ds");
    expect((await run(["init", ds])).code).toBe(0);
    const file = join(dir, "tokens.json");
    expect(
      (await run(["token", "create", "--role", "reader", "--name", "etl", "--tokens", file])).code,
    ).toBe(0);
    await chmod(file, 0o666);
    const r = await run(["serve", ds, "--tokens", file, "--port", "0", "--json"]);
    expect(r.code).toBe(2);
    expect(r.json()).toMatchObject({
      ok: false,
      error: { kind: "invalid-input", code: "TOKENS_FILE_WRITABLE" },
    });
    const text = await run(["serve", ds, "--tokens", file, "--port", "0"]);
    expect(text.stderr).toMatch(/writable by its group and everyone \(mode 0666\)/);
    expect(text.stderr).toContain(`chmod 600 ${file}`);
  });

  it("T2 token revoke writes the revocation on the dataset's store and removes the entry; a server on that store refuses the token", async () => {
    const ds = join(dir, "ds");
    expect((await run(["init", ds])).code).toBe(0);
    const file = join(dir, "tokens.json");
    const created = await run([
      "token",
      "create",
      "--role",
      "reader",
      "--name",
      "etl",
      "--tokens",
      file,
      "--json",
    ]);
    const token = created.json().token as string;
    expect(
      (await run(["token", "create", "--role", "writer", "--name", "loader", "--tokens", file]))
        .code,
    ).toBe(0);
    const r = await run(["token", "revoke", ds, "--name", "etl", "--tokens", file, "--json"]);
    expect(r.code, r.stdout).toBe(0);
    const sha256 = hashToken(token);
    expect(r.json()).toMatchObject({
      ok: true,
      command: "token revoke",
      name: "etl",
      sha256,
      revokedOn: [
        { dataset: "ds", key: `${REVOKED_TOKENS_PREFIX}${sha256}.json`, alreadyRevoked: false },
      ],
      removedFromTokensFile: true,
    });
    expect((await loadTokens(file)).map((t) => t.name)).toEqual(["loader"]);
    expect(
      JSON.parse(await readFile(join(ds, `${REVOKED_TOKENS_PREFIX}${sha256}.json`), "utf8")),
    ).toMatchObject({ name: "etl", sha256 });
    // Revoking by hash where the entry is gone from the file: already revoked, still success.
    const again = await run(["token", "revoke", ds, "--sha256", sha256, "--json"]);
    expect(again.code).toBe(0);
    expect(again.json()).toMatchObject({
      revokedOn: [{ alreadyRevoked: true }],
      removedFromTokensFile: false,
    });
    // Even with its entry still in a copy of the file, the token is refused.
    const app = await buildServer({
      datasets: [{ name: "ds", store: createLocalStore({ root: ds }) }],
      tokens: [{ name: "etl", role: "reader", sha256 }],
      logger: false,
      dashboardDir: null,
    });
    try {
      const res = await app.inject({
        url: "/v1/datasets",
        headers: { authorization: `Bearer ${token}` },
      });
      expect(res.statusCode).toBe(401);
    } finally {
      await app.close();
    }
    const bad = await run(["token", "revoke", ds, "--json"]);
    expect(bad.code).toBe(2);
  });

  it("T3 token create --out writes the token to a new file of mode 600 (whatever the umask), prints no token, and refuses an existing file writing nothing", async () => {
    const file = join(dir, "tokens.json");
    const out = join(dir, "prometheus.token");
    const previous = process.umask(0o022); // the usual umask: a redirect makes 644
    try {
      const r = await run(
        [
          "token",
          "create",
          "--role",
          "reader",
          "--name",
          "prometheus",
          "--tokens",
          file,
          "--out",
          out,
        ],
        { cwd: dir },
      );
      expect(r.code, r.stderr).toBe(0);
      expect((await stat(out)).mode & 0o777).toBe(0o600);
      const token = (await readFile(out, "utf8")).trim();
      expect(token.length).toBeGreaterThan(20);
      expect(r.stdout).not.toContain(token);
      const tokens = await loadTokens(file);
      expect(tokens.map((t) => t.name)).toContain("prometheus");
      // an existing file is refused (exit 3), left as it is, and no entry is added
      await writeFile(out, "keep");
      const again = await run(
        [
          "token",
          "create",
          "--role",
          "reader",
          "--name",
          "other",
          "--tokens",
          file,
          "--out",
          out,
          "--json",
        ],
        { cwd: dir },
      );
      expect(again.code).toBe(3);
      expect(again.json()).toMatchObject({ error: { code: "TOKEN_FILE_EXISTS" } });
      expect(await readFile(out, "utf8")).toBe("keep");
      expect((await loadTokens(file)).map((t) => t.name)).not.toContain("other");
    } finally {
      process.umask(previous);
    }
  });
});
