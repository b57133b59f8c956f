import { describe } from "vitest";
import { SLICES, seedSlice } from "./seed-range.js";

describe(`randomized interleavings, slice 4 of ${SLICES} (docs/protocol.md §8)`, () => {
  seedSlice(3);
});
