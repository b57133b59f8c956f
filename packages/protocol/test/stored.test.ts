import { encodeJson, isHoldfastError } from "@holdfast/conditional-store";
import { parseStored } from "@holdfast/protocol/internal";
import { describe, expect, it } from "vitest";
import { z } from "zod";

describe("parseStored", () => {
  const Schema = z.object({ schema: z.literal(1) });

  it("parses a stored object that matches its schema", () => {
    expect(parseStored(Schema, encodeJson({ schema: 1 }), "k", "get")).toEqual({ schema: 1 });
  });

  it.each([
    ["not JSON", new TextEncoder().encode("{trunc")],
    ["another schema", encodeJson({ schema: 2 })],
  ])("%s is invalid-input MALFORMED_OBJECT naming the key", (_, body) => {
    let thrown: unknown;
    try {
      parseStored(Schema, body, "_holdfast/x.json", "get");
    } catch (error) {
      thrown = error;
    }
    expect(isHoldfastError(thrown, "invalid-input")).toBe(true);
    expect(thrown).toMatchObject({
      code: "MALFORMED_OBJECT",
      key: "_holdfast/x.json",
      operation: "get",
    });
  });
});
