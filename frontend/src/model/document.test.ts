import { describe, expect, it } from "vitest";
import example from "../../../geon/examples/loom_sharded_add.json";
import { graphView, issuesByNode, LAYOUT, TENSOR, type Issue, type LoomDocument } from "./document";

const loom = example as LoomDocument;

describe("graphView", () => {
  it("draws the loom example's three tensors and its operation, not its applications", () => {
    const view = graphView(loom);
    expect(view.boxes.map((b) => [b.kind, b.title, b.subtitle]).sort()).toEqual([
      ["operation", "op:add", "2 applications"],
      ["tensor", "t0", "int32 (10×5)"],
      ["tensor", "t1", "int32 (10×5) @[200, 50]"],
      ["tensor", "z", "int32 (10×5)"],
    ]);
    expect(view.edges.length).toBe(3);
  });

  it("names axes and pins a node with a Layout tag", () => {
    const doc: LoomDocument = {
      id: "g",
      nodes: [
        {
          id: "x",
          type: TENSOR,
          label: "x",
          body: { dtype: "float32", range: { start: [0, 0], end: [2, 3] } },
          tags: {
            "urn:geon:2026-11:tag_types.jsd#/tags/TensorAxes": { axes: ["H", "W-1"] },
            [LAYOUT]: { x: 10, y: 20 },
          },
        },
      ],
    };
    expect(graphView(doc).boxes).toEqual([
      { id: "x", kind: "tensor", title: "x", subtitle: "float32 (H=2, W-1=3)", pinned: { x: 10, y: 20 } },
    ]);
  });
});

describe("issuesByNode", () => {
  it("counts the issues naming each node", () => {
    const issue = (ids: string[]): Issue => ({ constraint: "C", type: "T", severity: "error", summary: "", message: "", nodeIds: ids });
    expect([...issuesByNode([issue(["a", "b"]), issue(["a"])])].sort()).toEqual([["a", 2], ["b", 1]]);
  });
});
