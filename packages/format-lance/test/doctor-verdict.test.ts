import { assertStoreSupported, MemoryStore } from "@holdfast/conditional-store";
import { FaultStore } from "@holdfast/conditional-store/testing";
import { createContext } from "@holdfast/protocol";
import { holdfastFormatEntry } from "@holdfast/refs-lifecycle";
import { describe, expect, it } from "vitest";
import { diagnoseStore, refusedStoreDiagnosis } from "../src/index.js";

// docs/protocol.md §2: a store that ignores If-None-Match gets one verdict wherever the doctor
// meets it: probed after opening (the HTTP API's doctor, diagnoseStore) or refused by its
// backend at open (the CLI's doctor, refusedStoreDiagnosis). Both are the format package's.
describe("the doctor's verdict on a store without create-only writes", () => {
  it("a store that ignores If-None-Match is unsupported with no guarantee, probed or refused at open", async () => {
    const ignoring = new FaultStore(new MemoryStore(), {
      rules: [
        {
          operation: "put",
          precondition: "create",
          times: Number.POSITIVE_INFINITY,
          fault: { type: "strip-precondition" },
        },
      ],
    });
    const probed = await diagnoseStore(createContext(ignoring), {
      resolved: await holdfastFormatEntry.resolve(createContext(ignoring)),
    });
    const refusal = await assertStoreSupported(ignoring).then(
      () => new Error("assertStoreSupported accepted the store"),
      (error: unknown) => error as Error,
    );
    expect(refusal).toMatchObject({ kind: "unsupported" });
    const refused = refusedStoreDiagnosis("memory", refusal.message);

    expect(probed.verdict).toBe("unsupported");
    expect(probed.checks).toContainEqual(
      expect.objectContaining({ id: "create-only", status: "fail" }),
    );
    expect(refused).toEqual({
      backend: "memory",
      verdict: "unsupported",
      declared: null,
      checks: [{ id: "create-only", status: "fail", detail: refusal.message }],
      clockSkewMs: null,
      guarantees: probed.guarantees,
    });
    expect(refused.guarantees).toHaveLength(1);
    expect(refused.guarantees[0]).toMatch(/^NOTHING: /);
  });
});
