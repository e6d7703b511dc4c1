// The form itself is driven in Chromium: tests/browser/test_import_names.py (no DOM here).
import { describe, expect, it } from "vitest";
import { type ImportAxis, nameProblem, namedAxes } from "./importReview";

const axis = (name: string, length: number, role = "", proposed = name): ImportAxis => ({ name, length, role, proposed, seen: "" });
const AXES = [axis("batch", 3, "batch"), axis("d4", 4, "heads", "heads"), axis("d32", 32, "hidden", "hidden"), axis("d1_43", 1), axis("d1_44", 1)];

describe("nameProblem", () => {
  it.each([
    ["a good name", "d4", "h", { batch: "batch", d4: "h", d32: "hidden" }, ""],
    ["not an axis name", "d4", "2 heads", { batch: "batch", d4: "2 heads", d32: "hidden" }, 'axis name "2 heads" is invalid; expected a letter or "_" followed by letters, digits or "_"'],
    ["empty", "d4", "", { batch: "batch", d4: "", d32: "hidden" }, 'axis name "" is invalid; expected a letter or "_" followed by letters, digits or "_"'],
    ["one name twice, as the server says it", "d32", "heads", { batch: "batch", d4: "heads", d32: "heads" }, 'name "heads" is given to axes "d4" and "d32"; expected one name per axis'],
  ])("%s", (_label, key, name, names, expected) => {
    expect(nameProblem(key, name, names)).toBe(expected);
  });
});

describe("namedAxes", () => {
  it("lists the axes longer than 1 and counts the others", () => {
    const { shown, hidden } = namedAxes(AXES);
    expect([shown.map((a) => a.name), hidden]).toEqual([["batch", "d4", "d32"], 2]);
  });
});
