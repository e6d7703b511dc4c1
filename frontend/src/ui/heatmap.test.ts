import { describe, expect, it } from "vitest";
import { cellAt, hoverText, ticks } from "./heatmap";

describe("reading a heat map", () => {
  it("finds the cell under the pointer, clamped to the map", () => {
    expect(cellAt(0, 0, 100, 40, 2, 5)).toEqual([0, 0]);
    expect(cellAt(99, 39, 100, 40, 2, 5)).toEqual([1, 4]);
    expect(cellAt(45, 25, 100, 40, 2, 5)).toEqual([1, 2]);
    expect(cellAt(120, -3, 100, 40, 2, 5)).toEqual([0, 4]);
  });

  it("names the cell by its axes, with the sliced dims first", () => {
    expect(hoverText(["H", "N"], [], 2, 5, 0.73123)).toBe("H=2, N=5: 0.7312");
    expect(hoverText(["B", "H", "N"], [1], 0, 3, -2)).toBe("B=1, H=0, N=3: -2");
    expect(hoverText(["N"], [], 0, 4, null)).toBe("N=4: –");
  });

  it("ticks the minimum, the middle and the maximum", () => {
    expect(ticks(-1, 3)).toEqual(["-1", "1", "3"]);
  });
});
