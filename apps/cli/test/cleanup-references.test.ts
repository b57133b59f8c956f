import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { createLocalStore } from "@holdfast/backends-local";
import { isHoldfastError, listAll } from "@holdfast/conditional-store";
import { FaultStore } from "@holdfast/conditional-store/testing";
import { createContext } from "@holdfast/protocol";
import { canonicalKey, createTag, holdfastFormat, INTENTS_PREFIX } from "@holdfast/refs-lifecycle";
import { tempDir } from "@holdfast/test-support";
import { describe, expect, it } from "vitest";
import { run } from "./run.js";

// A cleanup that writes recovers interrupted tag and branch operations first (the cleanup
// package's recoverAndCleanup, as the server's cleanup jobs): an expired intent no longer
// keeps its version (docs/protocol.md §7.8, R6).
describe("cleanup recovers interrupted reference operations first", () => {
  it("R6 an expired tag intent is fenced before the plan, so its version is retired; a dry run writes nothing", async () => {
    await using temp = await tempDir("holdfast-cli-refs-");
    const ds = join(temp.dir, "ds");
    const file = join(temp.dir, "part.bin");
    await writeFile(file, "bytes");
    for (const args of [
      ["init", ds],
      ["commit", ds, file],
      ["commit", ds, file],
      ["commit", ds, file],
    ]) {
      expect((await run(args)).code).toBe(0);
    }
    const store = createLocalStore({ root: ds });
    // Every answer to the tag's canonical put is lost: its creator leaves the intent behind.
    const faulty = new FaultStore(store, {
      requestMode: "single-attempt",
      rules: [
        {
          operation: "put",
          key: canonicalKey("tag", "stuck"),
          precondition: "create",
          times: Number.POSITIVE_INFINITY,
          fault: { type: "lose-before-apply" },
        },
      ],
    });
    const created = await createTag(
      createContext(faulty, { sleep: async () => {} }),
      { name: "stuck", target: { branch: "main", version: 1 } },
      { format: holdfastFormat, ownershipBoundMs: 1 },
    ).catch((error: unknown) => error);
    expect(isHoldfastError(created, "unresolved"), String(created)).toBe(true);
    const intents = async () => {
      const keys: string[] = [];
      for await (const meta of listAll(store, INTENTS_PREFIX)) keys.push(meta.key);
      return keys;
    };
    expect(await intents()).toHaveLength(1);
    // Past the intent's 1 ms bound in storage time (whole-second stamps).
    await new Promise((resolve) => setTimeout(resolve, 2100));

    const plan = await run([
      "cleanup",
      ds,
      "--retain",
      "1",
      "--min-age",
      "0s",
      "--dry-run",
      "--json",
    ]);
    expect(plan.code, plan.stdout + plan.stderr).toBe(0);
    expect(plan.json().references).toBeNull();
    expect(await intents()).toHaveLength(1);

    const done = await run(["cleanup", ds, "--retain", "1", "--min-age", "0s", "--json"]);
    expect(done.code, done.stdout + done.stderr).toBe(0);
    const answer = done.json() as {
      references: { fencedIntents: number; reclaimedIntents: number };
      stats: { retired: { branch: string; version: number }[] };
    };
    expect(answer.stats.retired).toEqual(expect.arrayContaining([{ branch: "main", version: 1 }]));
    expect(answer.references.fencedIntents).toBe(1);
    expect(await intents()).toEqual([]);
  });
});
