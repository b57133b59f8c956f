import { isHoldfastError } from "@holdfast/conditional-store";
import { FaultStore } from "@holdfast/conditional-store/testing";
import { describe, expect, it } from "vitest";
import {
  commit,
  confirmCommit,
  drain,
  readAdmission,
  readRecord,
  recoverRetirements,
  retirementKey,
  seal,
  UnresolvedTransitionError,
} from "../src/index.js";
import { memoryContext, noLeases, noRefs } from "./helpers.js";

const BODIES: [string, Uint8Array][] = [
  ["invalid JSON", new TextEncoder().encode('{"schema": 1, "state": ')],
  ["an empty body", new Uint8Array()],
  ["binary", new Uint8Array([0xff, 0xfe, 0x00, 0x01, 0x89, 0x50, 0x4e, 0x47])],
];

describe("a retirement record that is not JSON (docs/operations.md: MALFORMED_OBJECT)", () => {
  for (const [what, body] of BODIES) {
    it(`${what}: readRecord, readAdmission and recovery throw invalid-input naming the key`, async () => {
      const { ctx, store } = memoryContext();
      const key = retirementKey("main", 1, 3, "01GARBAGE");
      await store.put(key, body);
      for (const attempt of [
        () => readRecord(ctx, key),
        () => readAdmission(ctx, "main", 2),
        () => recoverRetirements(ctx, { leaseCensus: noLeases, referenceCensus: noRefs }),
      ]) {
        const error = await attempt().catch((e: unknown) => e);
        expect(isHoldfastError(error, "invalid-input")).toBe(true);
        expect(error).toMatchObject({ code: "MALFORMED_OBJECT", key });
        expect((error as Error).cause).toBeDefined();
      }
    });
  }

  it("a record of a newer schema stays `unsupported` and names the key", async () => {
    const { ctx, store } = memoryContext();
    const key = retirementKey("main", 1, 3, "01NEWER");
    await store.put(key, new TextEncoder().encode('{"schema": 2}'));
    const error = await readRecord(ctx, key).catch((e: unknown) => e);
    expect(isHoldfastError(error, "unsupported")).toBe(true);
    expect(error).toMatchObject({ key });
  });
});

describe("a commit whose every answer is lost", () => {
  it("answer, re-issues, read-back and the confirmation read all lost: unresolved, not ambiguous", async () => {
    const { ctx: base } = memoryContext();
    const faulty = new FaultStore(base.store);
    const ctx = { ...base, store: faulty };
    const versions = [{ version: 1, manifestEtag: "e1" }];
    const sealed = await seal(ctx, await drain(ctx, { branch: "main", versions, owner: "o" }));
    faulty.on(
      { operation: "put", precondition: "if-match", times: Infinity },
      { type: "apply-then-lose" },
    );
    faulty.on({ operation: "get", times: Infinity }, { type: "lose-before-apply" });
    const error = await commit(ctx, sealed).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnresolvedTransitionError);
    const confirmed = await confirmCommit(ctx, error as UnresolvedTransitionError).catch(
      (e: unknown) => e,
    );
    expect(isHoldfastError(confirmed, "unresolved")).toBe(true);
    expect(confirmed).toMatchObject({ key: sealed.key, code: "COMMIT_UNRESOLVED" });
    expect(isHoldfastError((confirmed as Error).cause, "ambiguous")).toBe(true);
  });
});
