import {
  classifyFailure,
  HOLDFAST_ERROR_KINDS,
  type HoldfastErrorKind,
  holdfastError,
  type RequestMode,
} from "@holdfast/conditional-store";
import { describe, expect, it } from "vitest";

const error = (kind: HoldfastErrorKind) => holdfastError(kind, "put", kind, { key: "k" });

describe("classifyFailure", () => {
  // kind → [single-attempt, repeating, completes-before-answer]
  const table: Record<HoldfastErrorKind, [string, string, string]> = {
    conflict: ["conflict", "conflict", "conflict"],
    "in-flight": ["in-flight", "in-flight", "in-flight"],
    refused: ["refused", "refused", "refused"],
    "not-found": ["refused", "refused", "refused"],
    "invalid-input": ["refused", "refused", "refused"],
    unsupported: ["refused", "refused", "refused"],
    auth: ["refused", "ambiguous", "refused"],
    ambiguous: ["ambiguous", "ambiguous", "refused"],
    unresolved: ["ambiguous", "ambiguous", "refused"],
    aborted: ["ambiguous", "ambiguous", "refused"],
  };
  const modes: RequestMode[] = ["single-attempt", "repeating", "completes-before-answer"];

  it("covers every error kind", () => {
    expect(Object.keys(table).sort()).toEqual([...HOLDFAST_ERROR_KINDS].sort());
  });

  for (const kind of HOLDFAST_ERROR_KINDS) {
    modes.forEach((mode, i) => {
      it(`${kind} on a ${mode} client is ${table[kind][i]}`, () => {
        expect(classifyFailure(error(kind), mode)).toBe(table[kind][i]);
      });
    });
  }

  it("an error that is not a HoldfastError is ambiguous, except on a local store", () => {
    const raw = new Error("socket hang up");
    expect(classifyFailure(raw, "single-attempt")).toBe("ambiguous");
    expect(classifyFailure(raw, "repeating")).toBe("ambiguous");
    expect(classifyFailure(raw, "completes-before-answer")).toBe("refused");
    expect(classifyFailure("not even an error", "single-attempt")).toBe("ambiguous");
  });

  it("an error merely named HoldfastError with an unknown kind is not trusted", () => {
    const fake = Object.assign(new Error("x"), { name: "HoldfastError", kind: "conflict-ish" });
    expect(classifyFailure(fake, "single-attempt")).toBe("ambiguous");
  });
});
