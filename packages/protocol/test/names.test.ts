import { isHoldfastError } from "@holdfast/conditional-store";
import { validateName } from "@holdfast/protocol";
import { NameSchema } from "@holdfast/protocol/internal";
import { describe, expect, it } from "vitest";

function invalid(fn: () => unknown): boolean {
  try {
    fn();
    return false;
  } catch (error) {
    return isHoldfastError(error, "invalid-input");
  }
}

const VALID = ["main", "feature_1", "v1.2.3", "a-b", "A", "_x", "x".repeat(128)];
const INVALID = [
  "",
  ".",
  "..",
  ".hidden",
  "-flag",
  "a/b",
  "a\\b",
  "a b",
  "é",
  "a\u0000",
  "x".repeat(129),
];

describe("names", () => {
  it.each(VALID)("accepts %s", (name) => {
    expect(validateName(name, "branch")).toBe(name);
  });

  it.each(INVALID)("rejects %j with invalid-input", (name) => {
    expect(invalid(() => validateName(name, "tag"))).toBe(true);
  });

  it("rejects non-strings", () => {
    expect(invalid(() => validateName(42, "branch"))).toBe(true);
    expect(invalid(() => validateName(undefined, "branch"))).toBe(true);
  });

  it("invariant 6: the persisted name schema accepts exactly the names validateName accepts", () => {
    for (const name of VALID) expect(NameSchema.safeParse(name).success).toBe(true);
    for (const name of INVALID) expect(NameSchema.safeParse(name).success).toBe(false);
  });
});
