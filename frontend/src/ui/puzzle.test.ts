import { describe, expect, it } from "vitest";
import { verdict, type Attempt } from "./puzzle";

const attempt = (extra: Partial<Attempt>): Attempt => ({ id: 1, key: "", status: "done", solved: false, result: {}, error: "", ...extra });

describe("verdict", () => {
  it("says solved with the number of draws", () => {
    expect(verdict(attempt({ solved: true, result: { solved: true, draws: 50 } }))).toEqual({ solved: true, text: "Solved: your graph matches the reference on all 50 draws." });
  });

  it("gives the first difference in axis names, as the checker words it (geon.teaching.puzzles)", () => {
    const a = attempt({ result: { solved: false, draws: 3, counterexample: { axes: { H: 1, W: 3 }, message: "with H=1, W=3: at (H=0) you get 5.0, expected 7.0" } } });
    expect(verdict(a).text).toBe("Not yet. With H=1, W=3: at (H=0) you get 5.0, expected 7.0");
    const before = attempt({ result: { solved: false, draws: 0, counterexample: { axes: {}, message: "the solution uses op:max, which this puzzle does not allow" } } });
    expect(verdict(before).text).toBe("Not yet. The solution uses op:max, which this puzzle does not allow");
  });

  it("says why a check could not run", () => {
    expect(verdict(attempt({ status: "failed", error: "the reference does not check" })).text).toBe("The check could not run: the reference does not check");
  });
});
