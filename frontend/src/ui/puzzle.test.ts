import { describe, expect, it } from "vitest";
import { counterexampleParts, gridTables, verdict, type Attempt } from "./puzzle";

const attempt = (extra: Partial<Attempt>): Attempt => ({
  id: 1,
  key: "",
  status: "done",
  solved: false,
  result: {},
  error: "",
  ...extra,
});

describe("verdict", () => {
  it("says solved with the number of draws", () => {
    expect(verdict(attempt({ solved: true, result: { solved: true, draws: 50 } }))).toEqual({
      solved: true,
      text: "Solved: your graph matches the reference on all 50 draws.",
    });
  });

  it("gives the first difference in axis names, as the checker words it (geon.learn.content.puzzles)", () => {
    const a = attempt({
      result: {
        solved: false,
        draws: 3,
        counterexample: {
          axes: { H: 1, W: 3 },
          message: "with H=1, W=3: at (H=0) you get 5.0, expected 7.0",
        },
      },
    });
    expect(verdict(a).text).toBe("Not yet. With H=1, W=3: at (H=0) you get 5.0, expected 7.0");
    const before = attempt({
      result: {
        solved: false,
        draws: 0,
        counterexample: {
          axes: {},
          message: "the solution uses op:max, which this puzzle does not allow",
        },
      },
    });
    expect(verdict(before).text).toBe(
      "Not yet. The solution uses op:max, which this puzzle does not allow",
    );
  });

  it("says why a check could not run", () => {
    expect(verdict(attempt({ status: "failed", error: "the reference does not check" })).text).toBe(
      "The check could not run: the reference does not check",
    );
  });
});

describe("counterexample grids (issue 36)", () => {
  it("labels rows and columns with the axes, NumPy's order: the last axis along the columns", () => {
    const [table] = gridTables({
      axes: ["H", "W-1"],
      values: [
        [4, 3],
        [1, -2],
      ],
    });
    expect(table.cols).toEqual(["W-1=0", "W-1=1"]);
    expect(table.rows).toEqual([
      { label: "H=0", cells: ["4.0", "3.0"] },
      { label: "H=1", cells: ["1.0", "-2.0"] },
    ]);
    expect(gridTables({ axes: ["W"], values: [2, 0.5] })[0].rows).toEqual([
      { label: "", cells: ["2.0", "0.5"] },
    ]);
    expect(
      gridTables({ axes: ["B", "H", "W"], values: [[[1]], [[2]]] }).map((t) => t.title),
    ).toEqual(["B=0", "B=1"]);
    expect(gridTables({ axes: ["H"], values: null })).toEqual([]);
  });

  it("draws the inputs, the result and the expected values, and nothing for a check before any draw", () => {
    const c = {
      axes: { H: 1, W: 2 },
      message: "m",
      inputs: { m: { axes: ["H", "W-1"], values: [[4, 3]] }, v: { axes: ["W"], values: [2, -2] } },
      got: { axes: ["H"], values: [0] },
      expected: { axes: ["H"], values: [2] },
    };
    expect(counterexampleParts(c).map(([caption]) => caption)).toEqual([
      "input m",
      "input v",
      "your result",
      "expected",
    ]);
    expect(counterexampleParts({ ...c, got: null }).map(([caption]) => caption)).toEqual([
      "input m",
      "input v",
      "expected",
    ]);
    expect(counterexampleParts({ axes: {}, message: "the solution uses op:max" })).toEqual([]);
  });
});
