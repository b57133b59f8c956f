import { RetirementState } from "@holdfast/protocol";
import { RetirementRecordState } from "@holdfast/protocol/internal";
import { describe, expect, it } from "vitest";

describe("the retirement record state a commit reads (docs/protocol.md §2.5, Commit 4)", () => {
  it("reads a full record as the retirement state machine writes it, in every state", () => {
    for (const state of RetirementState.options) {
      const record = {
        schema: 1,
        opId: "op",
        writerId: "w",
        owner: "o",
        branch: "main",
        state,
        ownershipBoundMs: 60_000,
        versions: [{ version: 3, manifestEtag: "e", cancelled: false }],
      };
      expect(RetirementRecordState.parse(record)).toMatchObject({
        state,
        branch: "main",
        versions: [{ version: 3, cancelled: false }],
      });
    }
  });

  it("refuses a record without the versions a commit checks", () => {
    expect(RetirementRecordState.safeParse({ state: "committed", branch: "main" }).success).toBe(
      false,
    );
  });
});
