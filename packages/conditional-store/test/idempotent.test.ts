import { holdfastError, reissueIdempotent } from "@holdfast/conditional-store";
import { recordingSleep } from "@holdfast/conditional-store/testing";
import { describe, expect, it } from "vitest";
import { rejection } from "./helpers.js";

describe("reissueIdempotent", () => {
  it("C10 re-issues an ambiguous answer per the policy and returns the first success", async () => {
    const sleep = recordingSleep();
    let calls = 0;
    const value = await reissueIdempotent(
      async () => {
        calls += 1;
        if (calls < 3) throw holdfastError("ambiguous", "delete", "503");
        return "done";
      },
      { sleep },
    );
    expect(value).toBe("done");
    expect(calls).toBe(3);
    expect(sleep.pauses).toEqual([200, 400]);
  });

  it("C10 stops after the policy's last pause and throws the last ambiguous answer", async () => {
    const sleep = recordingSleep();
    let calls = 0;
    const error = await rejection(
      reissueIdempotent(
        async () => {
          calls += 1;
          throw holdfastError("ambiguous", "get", `lost ${calls}`);
        },
        { sleep },
      ),
    );
    expect(error).toMatchObject({ kind: "ambiguous", message: expect.stringMatching(/lost 5/) });
    expect(sleep.pauses).toEqual([200, 400, 800, 1600]);
  });

  it("never re-issues a definite answer (refused, conflict, auth)", async () => {
    for (const kind of ["refused", "conflict", "auth"] as const) {
      let calls = 0;
      const error = await rejection(
        reissueIdempotent(async () => {
          calls += 1;
          throw holdfastError(kind, "delete", kind);
        }),
      );
      expect(error.kind).toBe(kind);
      expect(calls).toBe(1);
    }
  });
});
