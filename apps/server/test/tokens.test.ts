import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isHoldfastError } from "@holdfast/conditional-store";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createToken, hashToken, loadTokens, matchToken, roleAllows } from "../src/index.js";

describe("tokens", () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "holdfast-tokens-"));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("create stores only the SHA-256, never the token, and the token matches its entry", async () => {
    const file = join(dir, "tokens.json");
    const etl = await createToken(file, { name: "etl", role: "reader" });
    const ops = await createToken(file, { name: "ops", role: "admin" });
    const text = await readFile(file, "utf8");
    expect(text).not.toContain(etl.token);
    expect(text).toContain(hashToken(etl.token));
    const entries = await loadTokens(file);
    expect(entries.map((e) => [e.name, e.role])).toEqual([
      ["etl", "reader"],
      ["ops", "admin"],
    ]);
    expect(matchToken(entries, etl.token)?.name).toBe("etl");
    expect(matchToken(entries, ops.token)?.name).toBe("ops");
    expect(matchToken(entries, `${etl.token}x`)).toBeNull();
    expect(etl.token).not.toBe(ops.token);
  });

  it("a repeated name is a conflict and leaves the file as it was", async () => {
    const file = join(dir, "tokens.json");
    await createToken(file, { name: "etl", role: "reader" });
    const before = await readFile(file, "utf8");
    await expect(createToken(file, { name: "etl", role: "admin" })).rejects.toSatisfy((e) =>
      isHoldfastError(e, "conflict"),
    );
    expect(await readFile(file, "utf8")).toBe(before);
  });

  it("a malformed tokens file is invalid-input, never half-used", async () => {
    const file = join(dir, "bad.json");
    for (const text of ["nope", '[{"name":"a","role":"root","sha256":"00"}]', '{"name":"a"}']) {
      await writeFile(file, text);
      await expect(loadTokens(file)).rejects.toSatisfy((e) => isHoldfastError(e, "invalid-input"));
    }
  });

  it("roles are ordered reader < writer < admin", () => {
    expect(roleAllows("admin", "writer")).toBe(true);
    expect(roleAllows("writer", "reader")).toBe(true);
    expect(roleAllows("writer", "admin")).toBe(false);
    expect(roleAllows("reader", "writer")).toBe(false);
  });
});
