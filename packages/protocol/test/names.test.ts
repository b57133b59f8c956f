import { validateName } from "@holdfast/protocol";
import { NameSchema } from "@holdfast/protocol/internal";
import { describe, expect, it } from "vitest";

/** The `invalid-input` HoldfastError a rejected name throws (invariant 6). */
const INVALID_NAME = expect.objectContaining({
  name: "HoldfastError",
  kind: "invalid-input",
  code: "INVALID_NAME",
});

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
    expect(() => validateName(name, "tag")).toThrow(INVALID_NAME);
  });

  it("rejects non-strings", () => {
    expect(() => validateName(42, "branch")).toThrow(INVALID_NAME);
    expect(() => validateName(undefined, "branch")).toThrow(INVALID_NAME);
  });

  it("invariant 6: the persisted name schema accepts exactly the names validateName accepts", () => {
    for (const name of VALID) expect(NameSchema.safeParse(name).success).toBe(true);
    for (const name of INVALID) expect(NameSchema.safeParse(name).success).toBe(false);
  });
});
