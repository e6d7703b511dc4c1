import { describe, expect, it } from "vitest";
import { listedAxes } from "./axesPanel";

const axis = (name: string, length: number | null) => ({ id: `id-${name}`, name, length });
const AXES = [
  axis("batch", 3),
  axis("d1_43", 1),
  axis("heads", 4),
  axis("d1_44", 1),
  axis("n", null),
  axis("d1_45", 1),
];

describe("listedAxes", () => {
  it.each([
    ["length-1 axes hidden by default", false, null, [], ["batch", "heads", "n"], 3],
    ["all shown when asked", true, null, [], ["batch", "d1_43", "heads", "d1_44", "n", "d1_45"], 0],
    ["the one being edited stays", false, "id-d1_44", [], ["batch", "heads", "d1_44", "n"], 2],
    ["one with an issue stays", false, null, ["d1_45"], ["batch", "heads", "n", "d1_45"], 2],
  ])("%s", (_label, showOnes, editing, issues, names, hidden) => {
    const got = listedAxes(
      AXES,
      showOnes as boolean,
      editing as string | null,
      new Set(issues as string[]),
    );
    expect([got.shown.map((a) => a.name), got.hidden]).toEqual([names, hidden]);
  });
});
