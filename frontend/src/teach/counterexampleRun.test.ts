import { describe, expect, it } from "vitest";
import { TENSOR, TENSOR_AXES } from "../model/document";
import { counterexampleRun } from "./counterexampleRun";

const tensor = (label: string, axes: string[]) => ({
  id: label,
  type: TENSOR,
  label,
  body: {},
  tags: { [TENSOR_AXES]: { axes } },
});

describe("a counterexample loaded into a run (issue 36)", () => {
  const inputs = {
    m: {
      axes: ["H", "W-1"],
      values: [
        [4, 3],
        [1, 0],
        [2, 2],
      ],
    },
    v: { axes: ["W"], values: [2, -2] },
  };

  it("takes the draw's lengths from the inputs and names each array by label", () => {
    const doc = { id: "g", nodes: [tensor("m", ["H", "W-1"]), tensor("v", ["W"])] };
    const made = counterexampleRun(inputs, { m: "float64", v: "float64" }, doc);
    if (typeof made === "string") throw new Error(made);
    expect(made.lengths).toEqual({ H: 3, W: 2 });
    expect(made.arrays).toEqual([
      { name: "m", dtype: "float64", shape: [3, 2], values: [4, 3, 1, 0, 2, 2] },
      { name: "v", dtype: "float64", shape: [2], values: [2, -2] },
    ]);
  });

  it("writes each input in the axis order of the student's own tensor", () => {
    const doc = { id: "g", nodes: [tensor("m", ["W-1", "H"]), tensor("v", ["W"])] };
    const made = counterexampleRun(inputs, {}, doc);
    if (typeof made === "string") throw new Error(made);
    expect(made.arrays[0]).toEqual({
      name: "m",
      dtype: "float64",
      shape: [2, 3],
      values: [4, 1, 2, 3, 0, 2],
    });
  });

  it("says why it cannot: an input too large to send, or one the graph lacks", () => {
    const doc = { id: "g", nodes: [tensor("m", ["H", "W-1"])] };
    expect(counterexampleRun(inputs, {}, doc)).toBe('your graph has no tensor "v" to feed');
    expect(counterexampleRun({ m: { axes: ["H"], values: null } }, {}, doc)).toMatch(
      /^input "m" was too large/,
    );
  });
});
