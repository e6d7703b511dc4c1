import { describe, expect, it } from "vitest";
import { collectiveLine, peaks, placedLine, signed, type PlanDiff } from "./planDiff";

const reduce = { kind: "all-reduce", meshAxes: ["tp"], bytes: 512, seconds: 0.000002, tensorLabel: "attn out partial", producerLabel: "op:dot", consumerLabel: "op:sum" };

describe("plan diff in words", () => {
  it("says a collective by name, with bytes and time", () => {
    expect(collectiveLine(reduce)).toMatch(/^all-reduce over tp · attn out partial: op:dot → op:sum · 512 B, /);
  });

  it("signs a change", () => {
    expect(signed(0, String)).toBe("no change");
    expect(signed(-3, String)).toBe("−3");
    expect(signed(2, String)).toBe("+2");
  });

  it("finds the busiest device on each side", () => {
    const diff = { devices: [{ before: { peakBytes: 10, seconds: 0 }, after: null }, { before: { peakBytes: 4, seconds: 0 }, after: { peakBytes: 30, seconds: 0 } }] } as unknown as PlanDiff;
    expect(peaks(diff)).toEqual({ before: 10, after: 30 });
  });
});

describe("placedLine", () => {
  it("names the first few and counts the rest", () => {
    expect(placedLine([])).toBe("none");
    expect(placedLine(["a", "b"])).toBe("a; b");
    expect(placedLine(["a", "b", "c", "d", "e", "f"])).toBe("a; b; c; d; and 2 more");
  });
});
