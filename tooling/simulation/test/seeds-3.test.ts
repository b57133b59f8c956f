import { describe } from "vitest";
import { SLICES, seedSlice } from "./seed-range.js";

describe(`randomized interleavings, slice 3 of ${SLICES} (docs/protocol.md §8)`, () => {
  seedSlice(2);
});
