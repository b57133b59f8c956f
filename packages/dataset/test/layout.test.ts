import { isHoldfastError } from "@holdfast/conditional-store";
import {
  formatVersion,
  isDataKey,
  manifestKey,
  parseManifestKey,
  versionsPrefix,
} from "@holdfast/dataset";
import { describe, expect, it } from "vitest";

function invalid(fn: () => unknown): boolean {
  try {
    fn();
    return false;
  } catch (error) {
    return isHoldfastError(error, "invalid-input");
  }
}

describe("layout", () => {
  it("pads versions to 20 digits so keys sort in version order", () => {
    expect(manifestKey("main", 7)).toBe("_versions/main/00000000000000000007.json");
    expect(manifestKey("main", 10) > manifestKey("main", 9)).toBe(true);
    expect(formatVersion(Number.MAX_SAFE_INTEGER)).toHaveLength(20);
    expect(versionsPrefix("dev")).toBe("_versions/dev/");
  });

  it("parses what it formats and nothing else", () => {
    expect(parseManifestKey(manifestKey("dev", 42))).toEqual({ branch: "dev", version: 42 });
    expect(parseManifestKey("_versions/dev/42.json")).toBeNull();
    expect(parseManifestKey("_versions/dev/00000000000000000000.json")).toBeNull();
    expect(parseManifestKey("_versions/.x/00000000000000000001.json")).toBeNull();
    expect(parseManifestKey("_versions/dev/00000000000000000001.json.tmp")).toBeNull();
    expect(parseManifestKey("data/00000000000000000001.json")).toBeNull();
  });

  it("rejects bad versions and branch names in keys", () => {
    expect(invalid(() => manifestKey("main", 0))).toBe(true);
    expect(invalid(() => manifestKey("main", 1.5))).toBe(true);
    expect(invalid(() => manifestKey("main", Number.MAX_SAFE_INTEGER + 1))).toBe(true);
    expect(invalid(() => manifestKey("../x", 1))).toBe(true);
  });

  it("recognizes data keys", () => {
    expect(isDataKey("data/01J.bin")).toBe(true);
    expect(isDataKey("data/")).toBe(false);
    expect(isDataKey("_versions/main/x")).toBe(false);
  });
});
