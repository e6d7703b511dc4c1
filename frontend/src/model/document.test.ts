import { describe, expect, it } from "vitest";
import example from "../../../geon/examples/loom_sharded_add.json";
import {
  AXIS,
  graphView,
  issueAxes,
  issuesByNode,
  LAYOUT,
  OPERATION,
  searchNodes,
  TENSOR,
  TENSOR_AXES,
  type Issue,
  type LoomDocument,
  VARIABLE_TAG,
} from "./document";

const loom = example as LoomDocument;

const issue = (ids: string[], message = ""): Issue => ({
  constraint: "C",
  type: "T",
  severity: "error",
  summary: "",
  message,
  nodeIds: ids,
});

const named: LoomDocument = {
  id: "g",
  nodes: [
    { id: "h", type: AXIS, label: "H", body: { name: "H", length: 2 } },
    { id: "w", type: AXIS, label: "W", body: { name: "W", length: 3 } },
    {
      id: "x",
      type: TENSOR,
      label: "x",
      body: { dtype: "float32", range: { start: [0, 0], end: [2, 3] } },
      tags: { [TENSOR_AXES]: { axes: ["H", "W-1"] }, [LAYOUT]: { x: 10, y: 20 } },
    },
    {
      id: "op",
      type: OPERATION,
      label: "op:exp",
      body: {
        kernel: "op:exp",
        inputs: { tensor: [{ tensorId: "x", range: { start: [0, 0], end: [2, 3] } }] },
      },
    },
  ],
};

describe("graphView", () => {
  it("draws the loom example's three tensors and its operation, not its applications", () => {
    const view = graphView(loom);
    expect(view.boxes.map((b) => [b.kind, b.title, b.subtitle]).sort()).toEqual([
      ["operation", "op:add", "2 applications"],
      ["tensor", "t0", "int32 (10×5)"],
      ["tensor", "t1", "int32 (10×5) @[200, 50]"],
      ["tensor", "z", "int32 (10×5)"],
    ]);
    expect(view.edges.map((e) => e.port).sort()).toEqual(["result", "tensors", "tensors"]);
  });

  it("gives a named tensor one chip per axis with its length, and pins a node with a Layout tag", () => {
    expect(graphView(named).boxes[0]).toEqual({
      id: "x",
      kind: "tensor",
      title: "x",
      subtitle: "float32",
      chips: [
        { ref: "H", axis: "H", length: 2 },
        { ref: "W-1", axis: "W", length: 3 },
      ],
      pinned: { x: 10, y: 20 },
    });
  });

  it("marks a variable's tensor box (the Variable tag of a trainable parameter)", () => {
    const doc = structuredClone(named);
    const x = doc.nodes.find((n) => n.id === "x")!;
    x.tags = { ...x.tags, [VARIABLE_TAG]: {} };
    expect(graphView(doc).boxes[0]!.subtitle).toBe("variable · float32");
  });
});

describe("issues", () => {
  it("groups the issues naming each node", () => {
    const a = issue(["a", "b"]);
    const b = issue(["a"]);
    expect([...issuesByNode([a, b])]).toEqual([
      ["a", [a, b]],
      ["b", [a]],
    ]);
  });

  it("finds the axes an issue names, for pinning to chips", () => {
    expect(
      issueAxes(
        issue(
          [],
          'axis "W" appears in both operands at level 0; mark one side as a dual, e.g. W-1',
        ),
      ),
    ).toEqual(["W"]);
    expect(issueAxes(issue([], 'op:sum reduction_axes ("N", "W-1") is not an axis'))).toEqual([
      "N",
      "W-1",
    ]);
  });
});

describe("searchNodes", () => {
  it.each([
    ["by label, and kernel: op:exp contains an x", "x", ["x", "op"]],
    ["by kernel", "exp", ["op"]],
    ["by axis", "w-1", ["x"]],
    ["nothing", "zzz", []],
    ["empty", "  ", []],
  ])("%s", (_label, text, want) => {
    expect(searchNodes(named, text)).toEqual(want);
  });
});

describe("unlabelled tensors", () => {
  it("are named after the kernel that writes them, else by their id", () => {
    const doc: LoomDocument = {
      id: "g",
      nodes: [
        {
          id: "0123456789ab",
          type: TENSOR,
          body: { dtype: "float32", range: { start: [0], end: [2] } },
        },
        {
          id: "out-id-000000",
          type: TENSOR,
          body: { dtype: "float32", range: { start: [0], end: [2] } },
        },
        {
          id: "op",
          type: OPERATION,
          body: {
            kernel: "op:relu",
            inputs: { x: [{ tensorId: "0123456789ab", range: { start: [0], end: [2] } }] },
            outputs: { result: [{ tensorId: "out-id-000000", range: { start: [0], end: [2] } }] },
          },
        },
      ],
    };
    expect(graphView(doc).boxes.map((b) => b.title)).toEqual(["01234567", "relu out", "op:relu"]);
  });
});
