import { describe, expect, it } from "vitest";
import { APPLICATION, INDEX_AXES, OPERATION, TENSOR, type LoomDocument } from "./document";
import { applicationsOf, coverage, coverOf, indexAxesOf, showRange } from "./shards";

const r = (start: number[], end: number[]) => ({ start, end });

describe("coverOf", () => {
  it("finds nothing when two halves partition the range", () => {
    expect(coverOf(r([0, 0], [4, 3]), [r([0, 0], [2, 3]), r([2, 0], [4, 3])])).toEqual({
      gaps: [],
      overlaps: [],
    });
  });
  it("finds the rows nobody writes as one gap", () => {
    expect(coverOf(r([0, 0], [4, 3]), [r([0, 0], [2, 3])])).toEqual({
      gaps: [r([2, 0], [4, 3])],
      overlaps: [],
    });
  });
  it("finds overlapping rows with their count", () => {
    expect(coverOf(r([0, 0], [4, 3]), [r([0, 0], [3, 3]), r([2, 0], [4, 3])])).toEqual({
      gaps: [],
      overlaps: [{ start: [2, 0], end: [3, 3], count: 2 }],
    });
  });
  it("ignores writes outside the tensor and reports a gap in a 1-D middle", () => {
    expect(coverOf(r([0], [10]), [r([-2], [3]), r([5], [12])])).toEqual({
      gaps: [r([3], [5])],
      overlaps: [],
    });
  });
  it("sees a hole in a grid", () => {
    const written = [r([0, 0], [2, 2]), r([0, 2], [2, 4]), r([2, 0], [4, 2])];
    expect(coverOf(r([0, 0], [4, 4]), written).gaps).toEqual([r([2, 2], [4, 4])]);
  });
});

describe("coverage of an operation", () => {
  const doc: LoomDocument = {
    id: "g",
    nodes: [
      { id: "x", type: TENSOR, body: { dtype: "float32", range: r([0, 0], [4, 3]) } },
      { id: "z", type: TENSOR, body: { dtype: "float32", range: r([0, 0], [4, 3]) } },
      {
        id: "op",
        type: OPERATION,
        body: {
          kernel: "op:neg",
          inputs: { x: [{ tensorId: "x", range: r([0, 0], [4, 3]) }] },
          outputs: { result: [{ tensorId: "z", range: r([0, 0], [4, 3]) }] },
        },
        tags: { [INDEX_AXES]: { axes: ["H", "N"] } },
      },
      {
        id: "a1",
        type: APPLICATION,
        body: {
          operationId: "op",
          outputs: { result: [{ tensorId: "z", range: r([0, 0], [2, 3]) }] },
        },
      },
    ],
  };
  it("lists the applications and the gap on the output", () => {
    expect(indexAxesOf(doc, "op")).toEqual(["H", "N"]);
    expect(applicationsOf(doc, "op").map((a) => a.outputs.map((o) => showRange(o.range)))).toEqual([
      ["[0:2, 0:3]"],
    ]);
    const [cov] = coverage(doc, "op");
    expect(cov?.tensorId).toBe("z");
    expect(cov?.gaps.map(showRange)).toEqual(["[2:4, 0:3]"]);
    expect(cov?.overlaps).toEqual([]);
  });
  it("is empty for an operation without applications", () => {
    expect(coverage({ ...doc, nodes: doc.nodes.filter((n) => n.id !== "a1") }, "op")).toEqual([]);
  });
});
