import { describe, expect, it } from "vitest";
import { heatColor } from "./runPanel";

describe("heat map colours", () => {
  it("runs blue (min) through white (middle) to red (max), grey for a missing value", () => {
    expect(heatColor(0, 0, 10)).toBe("rgb(37,99,235)");
    expect(heatColor(5, 0, 10)).toBe("rgb(248,250,252)");
    expect(heatColor(10, 0, 10)).toBe("rgb(220,38,38)");
    expect(heatColor(3, 3, 3)).toBe("rgb(248,250,252)");
    expect(heatColor(null, 0, 1)).toBe("#9ca3af");
  });
});
