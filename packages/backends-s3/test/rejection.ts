import { isHoldfastError } from "@holdfast/conditional-store";
import { expect } from "vitest";

/** The HoldfastError a promise rejects with (a test fails if it resolves or rejects otherwise). */
export async function rejection(promise: Promise<unknown>): Promise<Record<string, unknown>> {
  try {
    await promise;
  } catch (error) {
    expect(isHoldfastError(error), String(error)).toBe(true);
    return error as unknown as Record<string, unknown>;
  }
  return expect.fail("expected a HoldfastError");
}
