import { describe, expect, it } from "vitest";
import { AuthorError, deleteNodes } from "./author";
import { declareAxis, editAxis, removeAxis } from "./authorAxes";
import { addTensor, setTensorAxes } from "./authorTensors";
import { addOperation, connectInput } from "./authorOperations";
import { inferOperation, outputLabel, rederive, uniqueLabel } from "./derive";
import { copyNodes, pasteNodes } from "./clipboard";
import {
  declaredAxes,
  INDEX_AXES,
  IPF_INDEX,
  IPF_SIGNATURE,
  LAYOUT,
  nodeById,
  selections,
  TENSOR_AXES,
  tensorAxes,
  tensorRange,
  type LoomDocument,
} from "./document";
import { applyOps, invertOps, type EditOp } from "./edits";

const empty: LoomDocument = { id: "g", nodes: [] };

function run(doc: LoomDocument, ops: EditOp[]): LoomDocument {
  return applyOps(doc, ops);
}

function withAxes(): LoomDocument {
  let doc = empty;
  for (const [name, length] of [
    ["H", 2],
    ["W", 3],
    ["N", 4],
  ] as const)
    doc = run(doc, declareAxis(doc, { name, length }));
  return doc;
}

function tensor(doc: LoomDocument, label: string, axes: string[]): [LoomDocument, string] {
  const { ops, id } = addTensor(doc, { label, axes, at: { x: 0, y: 0 } });
  return [run(doc, ops), id];
}

/** The user's story: axes H, W, N; x[H, W-1] and y[W, N]; a dot of them. */
function story(): { doc: LoomDocument; x: string; y: string; dot: string } {
  let doc = withAxes();
  let x: string;
  let y: string;
  [doc, x] = tensor(doc, "x", ["H", "W-1"]);
  [doc, y] = tensor(doc, "y", ["W", "N"]);
  const { ops, id } = addOperation(doc, "op:dot", { x: 300, y: 0 });
  doc = run(doc, ops);
  doc = run(doc, connectInput(doc, x, id));
  doc = run(doc, connectInput(doc, y, id));
  return { doc, x, y, dot: id };
}

const outputOf = (doc: LoomDocument, op: string) =>
  nodeById(doc).get(selections(nodeById(doc).get(op)!.body.outputs).get("result")![0]!.tensorId)!;

describe("names of new outputs (issue 21: names, not dot_out twice)", () => {
  it("names a dot's output after its operands, and a second one apart", () => {
    const { doc, x, y, dot } = story();
    expect(outputOf(doc, dot).label).toBe("x·y");
    // a second dot of the same tensors gets "x·y 2"
    const second = addOperation(doc, "op:dot", { x: 300, y: 200 });
    let more = run(doc, second.ops);
    more = run(more, connectInput(more, x, second.id));
    more = run(more, connectInput(more, y, second.id));
    expect(outputOf(more, second.id).label).toBe("x·y 2");
    // and the second dot itself is told apart from the first
    expect(nodeById(more).get(second.id)!.label).toBe("op:dot 2");
  });

  it("writes a formula for infix kernels and a call for the others, short or generic", () => {
    expect([
      outputLabel(empty, "op:add", ["a", "b"]),
      outputLabel(empty, "op:relu", ["h"]),
      outputLabel(empty, "op:sum", ["x"]),
    ]).toEqual(["a+b", "relu(h)", "sum(x)"]);
    expect(outputLabel(empty, "op:multiply", ["a very long tensor name", "another long one"])).toBe(
      "multiply_out",
    );
    expect(
      uniqueLabel(
        {
          id: "g",
          nodes: [
            { id: "1", type: "t", label: "z", body: {} },
            { id: "2", type: "t", label: "z 2", body: {} },
          ],
        },
        "z",
      ),
    ).toBe("z 3");
  });
});

describe("axes", () => {
  it("declares an axis as an Axis node", () => {
    const doc = withAxes();
    expect([...declaredAxes(doc).values()].map((a) => [a.name, a.length])).toEqual([
      ["H", 2],
      ["W", 3],
      ["N", 4],
    ]);
  });

  it.each([
    [
      "a bad name",
      { name: "1x", length: 2 },
      'axis name "1x" is invalid; expected a letter or "_" followed by letters, digits or "_"',
    ],
    ["a taken name", { name: "H", length: 2 }, 'axis "H" is already declared; choose another name'],
    [
      "a zero length",
      { name: "K", length: 0 },
      'axis "K" length "0" is invalid; expected an integer >= 1, or empty for not yet bound',
    ],
    [
      "an unknown role",
      { name: "K", length: 2, roles: ["Colour"] },
      'axis "K" role "Colour" is not known; expected one of ("Channel", "Channelout", "Depth", "Height", "Time", "Width")',
    ],
  ])("refuses %s", (_label, input, message) => {
    expect(() => declareAxis(withAxes(), input)).toThrow(new AuthorError(message));
  });

  it("a longer axis resizes the tensors that use it and re-infers what reads them", () => {
    const { doc, x, dot } = story();
    const w = declaredAxes(doc).get("W")!.id;
    const after = run(doc, editAxis(doc, w, { name: "W", length: 5, roles: [] }));
    expect(tensorRange(nodeById(after).get(x))).toEqual({ start: [0, 0], end: [2, 5] });
    const sig = nodeById(after).get(dot)!.tags![IPF_SIGNATURE] as {
      inputs: { x: { shape: number[] }[] };
    };
    expect(sig.inputs.x[0]!.shape).toEqual([1, 5]);
  });

  it("a renamed axis is renamed in every tensor, keeping dual levels", () => {
    const { doc, x } = story();
    const w = declaredAxes(doc).get("W")!.id;
    const after = run(doc, editAxis(doc, w, { name: "K", length: 3 }));
    expect(tensorAxes(nodeById(after).get(x))).toEqual(["H", "K-1"]);
  });

  it("refuses to delete an axis in use, and deletes an unused one", () => {
    const { doc } = story();
    expect(() => removeAxis(doc, declaredAxes(doc).get("W")!.id)).toThrow(
      new AuthorError('axis "W" is used by ("x", "y"); change or delete those tensors first'),
    );
    let d = withAxes();
    d = run(d, removeAxis(d, declaredAxes(d).get("N")!.id));
    expect([...declaredAxes(d).keys()]).toEqual(["H", "W"]);
  });
});

describe("tensors and operations", () => {
  it("a tensor's range is its axes' lengths", () => {
    const [doc, x] = tensor(withAxes(), "x", ["H", "W - 1"]);
    const node = nodeById(doc).get(x)!;
    expect([node.tags![TENSOR_AXES], tensorRange(node), node.tags![LAYOUT]]).toEqual([
      { axes: ["H", "W-1"] },
      { start: [0, 0], end: [2, 3] },
      { x: 0, y: 0 },
    ]);
  });

  it.each([
    [
      "an undeclared axis",
      ["H", "K"],
      'axis "K" is not declared; expected one of ("H", "W", "N"), or declare it in the axes panel',
    ],
    [
      "a duplicate",
      ["H", "H"],
      'axis "H" appears twice in (H, H); the axes of a tensor are duplicate-free',
    ],
    [
      "a bad reference",
      ["H", "W--1"],
      'axis reference "W--1" is invalid; expected a name with an optional dual level, e.g. "W", "W-1", "W+1", or a composite "H*W"',
    ],
  ])("refuses a tensor with %s", (_label, axes, message) => {
    expect(() => addTensor(withAxes(), { label: "x", axes })).toThrow(new AuthorError(message));
  });

  it("refuses an axis without a length", () => {
    let doc = withAxes();
    doc = run(doc, declareAxis(doc, { name: "B", length: null }));
    expect(() => addTensor(doc, { label: "b", axes: ["B"] })).toThrow(
      new AuthorError(
        'axis "B" has no length yet; give it one in the axes panel before a tensor uses it',
      ),
    );
  });

  it("dot(x[H, W-1], y[W, N]) infers its output [H, N] with the derived tags", () => {
    const { doc, dot } = story();
    const out = outputOf(doc, dot);
    const op = nodeById(doc).get(dot)!;
    expect([tensorAxes(out), tensorRange(out), op.tags![INDEX_AXES]]).toEqual([
      ["H", "N"],
      { start: [0, 0], end: [2, 4] },
      { axes: ["H", "N"] },
    ]);
    expect(op.tags![IPF_SIGNATURE]).toEqual({
      inputs: {
        x: [
          {
            affineMap: {
              projection: [
                [1, 0],
                [0, 0],
              ],
              offset: [0, 0],
            },
            shape: [1, 3],
          },
        ],
        y: [
          {
            affineMap: {
              projection: [
                [0, 0],
                [0, 1],
              ],
              offset: [0, 0],
            },
            shape: [3, 1],
          },
        ],
      },
      outputs: {
        result: [
          {
            affineMap: {
              projection: [
                [1, 0],
                [0, 1],
              ],
              offset: [0, 0],
            },
            shape: [1, 1],
          },
        ],
      },
    });
  });

  it("refuses a connection the kernel refuses, naming the axis, and changes nothing", () => {
    let doc = withAxes();
    let x: string;
    let y: string;
    [doc, x] = tensor(doc, "x", ["H", "W"]);
    [doc, y] = tensor(doc, "y", ["W", "N"]);
    const { ops, id } = addOperation(doc, "op:dot");
    doc = run(doc, ops);
    doc = run(doc, connectInput(doc, x, id));
    const before = structuredClone(doc);
    expect(() => connectInput(doc, y, id)).toThrow(
      new AuthorError(
        'cannot connect "y" to op:dot as "y": axis "W" appears in both operands at level 0; mark one side as a dual, e.g. W-1',
      ),
    );
    expect(doc).toEqual(before);
  });

  it("refuses a third input to dot", () => {
    const { doc, x, dot } = story();
    expect(() => connectInput(doc, x, dot)).toThrow(
      new AuthorError("op:dot has all its inputs; delete one to connect another"),
    );
  });

  it("changing x to [H, W] leaves the output as it was (the server reports the issue), and back re-infers it", () => {
    const { doc, x, dot } = story();
    const broken = run(doc, setTensorAxes(doc, x, ["H", "W"]));
    expect(tensorAxes(outputOf(broken, dot))).toEqual(["H", "N"]);
    const y = nodeById(doc).get(
      selections(nodeById(doc).get(dot)!.body.inputs).get("y")![0]!.tensorId,
    )!.id;
    const moved = run(doc, setTensorAxes(doc, y, ["N", "W"]));
    expect(tensorAxes(outputOf(moved, dot))).toEqual(["H", "N"]);
  });

  it("an operation from the palette with selected tensors connects them in order", () => {
    const base = story();
    const { ops } = addOperation(base.doc, "op:add", { x: 0, y: 0 }, [base.x, base.x]);
    expect(() => run(base.doc, ops)).not.toThrow();
  });

  it("deleting a tensor takes it out of the operations that read it; undo puts everything back", () => {
    const { doc, x, dot } = story();
    const ops = deleteNodes(doc, [x]);
    const after = run(doc, ops);
    expect([
      nodeById(after).has(x),
      [...selections(nodeById(after).get(dot)!.body.inputs).keys()],
    ]).toEqual([false, ["y"]]);
    const back = run(after, invertOps(doc, ops));
    const sorted = (d: LoomDocument) => [...d.nodes].sort((a, b) => a.id.localeCompare(b.id));
    expect(sorted(back)).toEqual(sorted(doc));
  });

  it("a multi-selection of an operation and its tensors deletes referrers first, in one undoable edit (issue 36)", () => {
    const base = story();
    const doc = base.doc;
    const result = outputOf(doc, base.dot).id;
    // selected tensors first, the operation last: the order a person clicks in
    const ops = deleteNodes(doc, [base.x, result, base.y, base.dot]);
    const removed = ops.filter((o) => o.op === "remove_node").map((o) => (o as { id: string }).id);
    expect(removed[0]).toBe(base.dot);
    // as the server checks it: no node is removed while a node still there names it
    let current = doc;
    for (const op of ops) {
      if (op.op === "remove_node") {
        const named = current.nodes.filter(
          (n) => n.id !== op.id && JSON.stringify(n.body).includes(`"${op.id}"`),
        );
        expect(named.map((n) => n.label)).toEqual([]);
      }
      current = applyOps(current, [op]);
    }
    expect(current.nodes.map((n) => n.label).sort()).toEqual(
      doc.nodes
        .filter((n) => ![base.x, base.y, base.dot, result].includes(n.id))
        .map((n) => n.label)
        .sort(),
    );
    const back = run(current, invertOps(doc, ops));
    const sorted = (d: LoomDocument) => [...d.nodes].sort((a, b) => a.id.localeCompare(b.id));
    expect(sorted(back)).toEqual(sorted(doc));
  });

  it("copy and paste makes new nodes whose selections point to the copies", () => {
    const { doc, x, dot } = story();
    const { ops, ids } = pasteNodes(doc, copyNodes(doc, [x, dot]), { x: 40, y: 40 });
    const after = run(doc, ops);
    const op = nodeById(after).get(ids[1]!)!;
    const inputs = selections(op.body.inputs);
    expect([ids.length, inputs.get("x")![0]!.tensorId, selections(op.body.outputs).size]).toEqual([
      2,
      ids[0],
      0,
    ]);
    expect(nodeById(after).get(ids[0]!)!.tags![LAYOUT]).toEqual({ x: 40, y: 40 });
  });
});

describe("slice, pad, flatten, unflatten and conv2d", () => {
  const withParams = (doc: LoomDocument, id: string, params: unknown) =>
    run(doc, [{ op: "update_node", id, body: { params } }]);
  const inputRange = (doc: LoomDocument, op: string, key = "tensor") =>
    selections(nodeById(doc).get(op)!.body.inputs).get(key)![0]!.range;

  /** x[H, N] and a slice of N[1:3] into N2, params written before the connection. */
  function sliced(declareN2 = true): { doc: LoomDocument; x: string; op: string } {
    let doc = withAxes();
    if (declareN2) doc = run(doc, declareAxis(doc, { name: "N2", length: 2 }));
    let x: string;
    [doc, x] = tensor(doc, "x", ["H", "N"]);
    const { ops, id } = addOperation(doc, "op:slice");
    doc = withParams(run(doc, ops), id, {
      slices: { N: { start: 1, stop: 3 } },
      axes: { N: "N2" },
    });
    return { doc, x, op: id };
  }

  it("a slice writes its new axis, reads only its window and derives what the builder writes", () => {
    const { doc: before, x, op } = sliced();
    const doc = run(before, connectInput(before, x, op));
    const out = outputOf(doc, op);
    const node = nodeById(doc).get(op)!;
    expect([
      tensorAxes(out),
      tensorRange(out),
      inputRange(doc, op),
      node.tags![INDEX_AXES],
      node.tags![IPF_INDEX],
    ]).toEqual([
      ["H", "N2"],
      { start: [0, 0], end: [2, 2] },
      { start: [0, 1], end: [2, 3] },
      { axes: ["H", "N2"] },
      { start: [0, 0], end: [2, 2] },
    ]);
    expect(node.tags![IPF_SIGNATURE]).toEqual({
      inputs: {
        tensor: [
          {
            affineMap: {
              projection: [
                [1, 0],
                [0, 1],
              ],
              offset: [0, 1],
            },
            shape: [1, 1],
          },
        ],
      },
      outputs: {
        result: [
          {
            affineMap: {
              projection: [
                [1, 0],
                [0, 1],
              ],
              offset: [0, 0],
            },
            shape: [1, 1],
          },
        ],
      },
    });
  });

  it("a slice whose new axis is not declared is refused, naming the axis, and nothing changes", () => {
    const { doc, x, op } = sliced(false);
    const before = structuredClone(doc);
    expect(() => connectInput(doc, x, op)).toThrow(
      new AuthorError(
        'cannot connect "x" to op:slice as "tensor": axis "N2" in "N2" is not declared; declare it first',
      ),
    );
    expect(doc).toEqual(before);
  });

  it("an op without params takes its input; writing the params derives the output", () => {
    let doc = withAxes();
    let x: string;
    [doc, x] = tensor(doc, "x", ["H", "W", "N"]);
    const { ops, id } = addOperation(doc, "op:flatten", undefined, [x]);
    doc = run(doc, ops);
    expect([
      selections(nodeById(doc).get(id)!.body.outputs).size,
      inferOperation(doc, nodeById(doc).get(id)!),
    ]).toEqual([
      0,
      {
        kind: "error",
        type: "KernelError",
        message: 'op:flatten needs params "axes"; expected a list of axis references',
      },
    ]);
    doc = withParams(doc, id, { axes: ["H", "W"] });
    doc = run(doc, rederive(doc, [x]));
    const out = outputOf(doc, id);
    const node = nodeById(doc).get(id)!;
    expect([
      tensorAxes(out),
      tensorRange(out),
      node.tags![INDEX_AXES],
      node.tags![IPF_INDEX],
    ]).toEqual([
      ["H*W", "N"],
      { start: [0, 0], end: [6, 4] },
      { axes: ["H", "W", "N"] },
      { start: [0, 0, 0], end: [2, 3, 4] },
    ]);
    const sig = node.tags![IPF_SIGNATURE] as {
      outputs: { result: { affineMap: { projection: number[][] } }[] };
    };
    expect(sig.outputs.result[0]!.affineMap.projection).toEqual([
      [3, 1, 0],
      [0, 0, 1],
    ]);
  });

  it("with params, a refused connection is refused even when the complaint is about params", () => {
    let doc = withAxes();
    let x: string;
    [doc, x] = tensor(doc, "x", ["H", "W"]);
    const { ops, id } = addOperation(doc, "op:pad");
    doc = withParams(run(doc, ops), id, { pad: { H: [1, -1] } });
    expect(() => connectInput(doc, x, id)).toThrow(
      new AuthorError(
        'cannot connect "x" to op:pad as "tensor": op:pad widths "[1, -1]" for axis "H" are invalid; expected [before, after] with integers >= 0',
      ),
    );
  });

  it("a pad reads its whole input, with offsets from the tensor's start minus the widths", () => {
    let doc = withAxes();
    doc = run(doc, declareAxis(doc, { name: "H4", length: 4 }));
    let x: string;
    [doc, x] = tensor(doc, "x", ["H", "W"]);
    doc = run(doc, [
      { op: "update_node", id: x, body: { range: { start: [10, 0], end: [12, 3] } } },
    ]);
    const { ops, id } = addOperation(doc, "op:pad");
    doc = withParams(run(doc, ops), id, { pad: { H: [1, 1] }, axes: { H: "H4" } });
    doc = run(doc, connectInput(doc, x, id));
    const sig = nodeById(doc).get(id)!.tags![IPF_SIGNATURE] as {
      inputs: { tensor: { affineMap: { offset: number[] } }[] };
    };
    expect([
      tensorAxes(outputOf(doc, id)),
      inputRange(doc, id),
      sig.inputs.tensor[0]!.affineMap.offset,
    ]).toEqual([["H4", "W"], { start: [10, 0], end: [12, 3] }, [9, 0]]);
  });

  it("unflatten restores the group", () => {
    let doc = withAxes();
    let x: string;
    [doc, x] = tensor(doc, "x", ["H*W", "N"]);
    const { ops, id } = addOperation(doc, "op:unflatten", undefined, [x]);
    doc = run(doc, ops);
    expect([tensorAxes(outputOf(doc, id)), tensorRange(outputOf(doc, id))]).toEqual([
      ["H", "W", "N"],
      { start: [0, 0, 0], end: [2, 3, 4] },
    ]);
  });

  it("conv2d derives its windows: the input's height and width rows have the filter's lengths", () => {
    let doc = empty;
    for (const [name, length, roles] of [
      ["C", 3, ["Channel"]],
      ["H", 8, ["Height"]],
      ["W", 8, ["Width"]],
      ["N", 2, []],
      ["R", 3, ["Height"]],
      ["S", 3, ["Width"]],
      ["K", 4, ["Channelout"]],
      ["P", 6, ["Height"]],
      ["Q", 6, ["Width"]],
    ] as const) {
      doc = run(doc, declareAxis(doc, { name, length, roles: [...roles] }));
    }
    let x: string;
    let f: string;
    [doc, x] = tensor(doc, "x", ["C", "H", "W", "N"]);
    [doc, f] = tensor(doc, "f", ["C-1", "R", "S", "K"]);
    const { ops, id } = addOperation(doc, "op:conv2d");
    doc = withParams(run(doc, ops), id, { out_axes: ["K", "P", "Q", "N"] });
    doc = run(doc, connectInput(doc, x, id));
    doc = run(doc, connectInput(doc, f, id));
    const sig = nodeById(doc).get(id)!.tags![IPF_SIGNATURE] as {
      inputs: { x: { affineMap: { projection: number[][] }; shape: number[] }[] };
    };
    expect([
      tensorAxes(outputOf(doc, id)),
      sig.inputs.x[0]!.shape,
      sig.inputs.x[0]!.affineMap.projection[1],
      inputRange(doc, id, "x"),
    ]).toEqual([
      ["K", "P", "Q", "N"],
      [3, 3, 3, 1],
      [0, 1, 0, 0],
      { start: [0, 0, 0, 0], end: [3, 8, 8, 2] },
    ]);
  });

  it("renaming an axis renames it in slice params, as keys and as values, and in the derived tags", () => {
    const { doc: before, x, op } = sliced();
    let doc = run(before, connectInput(before, x, op));
    doc = run(doc, editAxis(doc, declaredAxes(doc).get("N2")!.id, { name: "M2", length: 2 }));
    doc = run(doc, editAxis(doc, declaredAxes(doc).get("N")!.id, { name: "L", length: 4 }));
    const node = nodeById(doc).get(op)!;
    expect([node.body.params, tensorAxes(outputOf(doc, op)), node.tags![INDEX_AXES]]).toEqual([
      { slices: { L: { start: 1, stop: 3 } }, axes: { L: "M2" } },
      ["H", "M2"],
      { axes: ["H", "M2"] },
    ]);
  });
});

describe("a dot's result order (params.axes)", async () => {
  const { dotOrders } = await import("./orders");
  // x[N, D] · w1[D-1, Hd]: by the DESIGN rule the operand holding the lower level (w1) gives its
  // free axes first, so (Hd, N); params.axes chooses another order of the same axes
  function mlp(params?: Record<string, unknown>): { doc: LoomDocument; op: string } {
    let doc = empty;
    for (const [name, length] of [
      ["N", 4],
      ["D", 3],
      ["Hd", 5],
    ] as const)
      doc = run(doc, declareAxis(doc, { name, length }));
    const x = addTensor(doc, { label: "x", axes: ["N", "D"], at: { x: 0, y: 0 } });
    doc = run(doc, x.ops);
    const w = addTensor(doc, { label: "w1", axes: ["D-1", "Hd"], at: { x: 0, y: 100 } });
    doc = run(doc, w.ops);
    const op = addOperation(doc, "op:dot", { x: 300, y: 0 });
    doc = run(doc, op.ops);
    doc = run(doc, connectInput(doc, x.id, op.id));
    doc = run(doc, connectInput(doc, w.id, op.id));
    if (params)
      doc = run(doc, [
        { op: "update_node", id: op.id, body: { ...nodeById(doc).get(op.id)!.body, params } },
      ]);
    return { doc, op: op.id };
  }

  it("offers both orders, marks the rule's and reads the chosen one", () => {
    const { doc, op } = mlp();
    expect(dotOrders(doc, nodeById(doc).get(op)!)).toEqual({
      byDefault: ["Hd", "N"],
      current: ["Hd", "N"],
      orders: [
        ["Hd", "N"],
        ["N", "Hd"],
      ],
    });
    const chosen = mlp({ axes: ["N", "Hd"] });
    expect(dotOrders(chosen.doc, nodeById(chosen.doc).get(chosen.op)!)!.current).toEqual([
      "N",
      "Hd",
    ]);
  });

  it("offers nothing for other kernels", () => {
    const { doc, op } = mlp();
    const node = nodeById(doc).get(op)!;
    expect(dotOrders(doc, { ...node, body: { ...node.body, kernel: "op:add" } })).toBeNull();
  });
});
