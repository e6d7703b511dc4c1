import { describe, expect, it } from "vitest";
import { shownDims } from "./stepper";

describe("the axes a stepper grid shows", () => {
  it("shows the last two axes longer than 1, so a conv's (K, P, Q, N) with K = N = 1 shows P by Q", () => {
    expect(shownDims([1, 3, 3, 1])).toEqual([1, 2]);
    expect(shownDims([2, 3, 4, 5])).toEqual([2, 3]);
    expect(shownDims([2, 1, 3])).toEqual([0, 2]);
  });

  it("falls back to the last two (or one) when fewer are longer than 1", () => {
    expect(shownDims([1, 1, 4])).toEqual([1, 2]);
    expect(shownDims([3])).toEqual([0]);
    expect(shownDims([])).toEqual([]);
  });
});
