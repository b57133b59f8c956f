import { CountingStore, MemoryStore } from "@holdfast/conditional-store";
import { FORMAT_REQUIRED } from "@holdfast/dataset";
import { createContext } from "@holdfast/protocol";
import { describe, expect, it } from "vitest";
import { diagnoseStore } from "../src/index.js";

// docs/protocol.md §1.1: the doctor reads a Lance table's details only in
// the format the application's FormatRegistry bound. A call without it is a type error (each
// `@ts-expect-error` below fails the typecheck once it is optional again) and, for a
// JavaScript caller, a typed refusal before any request (the doctor's probe writes).
describe("diagnoseStore takes the dataset's resolved format", () => {
  it("invariant 6: diagnoseStore called without a resolved format refuses with FORMAT_REQUIRED and sends nothing", async () => {
    const memory = new MemoryStore();
    const counting = new CountingStore(memory);
    const ctx = createContext(counting);
    const calls: [string, () => unknown][] = [
      // @ts-expect-error the resolved format is required
      ["no options", () => diagnoseStore(ctx)],
      // @ts-expect-error the resolved format is required
      ["{}", () => diagnoseStore(ctx, {})],
      // @ts-expect-error the resolved format is required
      ["a name only", () => diagnoseStore(ctx, { resolved: { name: "lance" } })],
    ];
    for (const [name, call] of calls) {
      const error = await Promise.resolve()
        .then(call)
        .then(
          () => new Error(`${name} succeeded`),
          (e: unknown) => e,
        );
      expect({ name, error }).toMatchObject({
        name,
        error: { kind: "invalid-input", code: FORMAT_REQUIRED },
      });
    }
    expect(counting.totalRequests()).toBe(0);
    expect(memory.keys()).toEqual([]);
  });
});
