import { describe, expect, it } from "vitest";
import { describeOutputs } from "./toolbar";

const out = (label: string, shape: number[], sum?: number) => ({ label, shape, dtype: "float64", sum });

describe("describeOutputs", () => {
  it.each([
    ["no outputs", {}, ""],
    ["one output", { outputs: [out("y", [4, 2], 3.14159265)] }, "outputs: y 4×2 float64, sum 3.14159"],
    ["a scalar without a sum", { outputs: [out("m", [])] }, "outputs: m scalar float64"],
    [
      "more than three",
      { outputs: [out("a", [1], 1), out("b", [1], 2), out("c", [1], 3), out("d", [1], 4)] },
      "outputs: a 1 float64, sum 1; b 1 float64, sum 2; c 1 float64, sum 3 and 1 more",
    ],
  ])("%s", (_label, result, expected) => {
    expect(describeOutputs(result)).toBe(expected);
  });
});
