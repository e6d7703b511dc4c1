import { describe, expect, it } from "vitest";
import {
  APPLICATION,
  AXIS,
  INDEX_AXES,
  IPF_INDEX,
  IPF_SIGNATURE,
  OPERATION,
  TENSOR,
  type LoomDocument,
  type LoomNode,
} from "./document";
import { applyOps } from "./edits";
import { IPF, ZRange } from "./ipf";
import {
  commitOps,
  fieldsOf,
  operationProjection,
  parseFields,
  regions,
  type Pick,
} from "./projection";

const r = (start: number[], end: number[]) => ({ start, end });
const ipf = (p: number[][], o: number[], s: number[]) => ({
  affineMap: { projection: p, offset: o },
  shape: s,
});

/** y[i] = x[i-1] + x[i] + x[i+1] over N = 8: a custom window kernel reading past both edges of x. */
function windowDoc(shards: [number, number][] = []): LoomDocument {
  const apps: LoomNode[] = shards.map(([a, b], i) => ({
    id: `app${i}`,
    type: APPLICATION,
    body: {
      operationId: "op",
      inputs: { x: [{ tensorId: "x", range: r([Math.max(a - 1, 0)], [Math.min(b + 1, 8)]) }] },
      outputs: { result: [{ tensorId: "y", range: r([a], [b]) }] },
    },
    tags: { [IPF_INDEX]: r([a], [b]) },
  }));
  return {
    id: "g",
    nodes: [
      { id: "n", type: AXIS, body: { name: "N", length: 8 } },
      { id: "x", type: TENSOR, label: "x", body: { dtype: "float32", range: r([0], [8]) } },
      { id: "y", type: TENSOR, label: "y", body: { dtype: "float32", range: r([0], [8]) } },
      {
        id: "op",
        type: OPERATION,
        body: {
          kernel: "custom:window3",
          inputs: { x: [{ tensorId: "x", range: r([0], [8]) }] },
          outputs: { result: [{ tensorId: "y", range: r([0], [8]) }] },
        },
        tags: {
          [INDEX_AXES]: { axes: ["N"] },
          [IPF_INDEX]: r([0], [8]),
          [IPF_SIGNATURE]: {
            inputs: { x: [ipf([[1]], [-1], [3])] },
            outputs: { result: [ipf([[1]], [0], [1])] },
          },
        },
      },
      ...apps,
    ],
  };
}

const shown = (doc: LoomDocument, pick: Pick, drafts?: Map<string, IPF>) =>
  regions(operationProjection(doc, "op")!, pick, drafts).map((g) => [
    g.key,
    `${g.raw}`,
    `${g.region}`,
    g.bands.map((b) => `${b.region}`),
    g.overlaps.map(String),
  ]);

describe("the projection window's view of an operation", () => {
  it("reads the index space, the ports and whether the kernel is custom", () => {
    const view = operationProjection(windowDoc(), "op")!;
    expect([
      view.custom,
      view.indexAxes,
      `${view.indexRange}`,
      view.ports.map((p) => [p.key, p.label, `${p.tensorRange}`, p.problem]),
    ]).toEqual([
      true,
      ["N"],
      "[0:8]",
      [
        ["inputs.x.0", "x", "[0:8]", null],
        ["outputs.result.0", "y", "[0:8]", null],
      ],
    ]);
    expect(operationProjection(windowDoc(), "x")).toBeNull();
  });

  it("clips an input's footprint to the tensor at its edge, as the server's checker does", () => {
    expect(shown(windowDoc(), { kind: "point", point: [0] })).toEqual([
      ["inputs.x.0", "[-1:2]", "[0:2]", [], []],
      ["outputs.result.0", "[0:1]", "[0:1]", [], []],
    ]);
  });

  it("does not call a region that every application reads whole a halo", () => {
    const doc = windowDoc([
      [0, 4],
      [4, 8],
    ]);
    const op = doc.nodes.find((n) => n.id === "op")!;
    const sig = op.tags![IPF_SIGNATURE] as { inputs: { x: unknown[] } };
    sig.inputs.x = [ipf([[0]], [0], [8])];
    const [input] = regions(operationProjection(doc, "op")!, { kind: "application", id: "app0" });
    expect([input!.bands.map((b) => `${b.region}`), input!.overlaps, input!.shared]).toEqual([
      ["[0:8]", "[0:8]"],
      [],
      true,
    ]);
  });

  it("shows each application's band; neighbouring input bands overlap by the halo", () => {
    expect(
      shown(
        windowDoc([
          [0, 4],
          [4, 8],
        ]),
        { kind: "application", id: "app1" },
      ),
    ).toEqual([
      ["inputs.x.0", "[3:9]", "[3:8]", ["[0:5]", "[3:8]"], ["[3:5]"]],
      ["outputs.result.0", "[4:8]", "[4:8]", ["[0:4]", "[4:8]"], []],
    ]);
  });

  it("moves the regions with a draft IPF before anything is committed", () => {
    const view = operationProjection(windowDoc(), "op")!;
    const draft = parseFields(view.ports[0]!, { ...fieldsOf(view.ports[0]!.ipf!), offset: ["2"] });
    expect(
      shown(windowDoc(), { kind: "point", point: [3] }, new Map([["inputs.x.0", draft]]))[0],
    ).toEqual(["inputs.x.0", "[5:8]", "[5:8]", [], []]);
  });

  it.each([
    ["offset", { offset: ["1.5"] }, 'offset 0 of x (input x) is "1.5"; expected an integer'],
    ["shape", { shape: ["0"] }, 'shape 0 of x (input x) is "0"; expected an integer >= 1'],
    [
      "projection",
      { projection: [["a"]] },
      'projection row 0, column 0 of x (input x) is "a"; expected an integer',
    ],
  ])("refuses a bad %s, naming the value and what is valid", (_what, change, message) => {
    const port = operationProjection(windowDoc(), "op")!.ports[0]!;
    expect(() => parseFields(port, { ...fieldsOf(port.ipf!), ...change })).toThrow(message);
  });

  it("commits the signature with the selections of the operation and its applications re-projected", () => {
    const doc = windowDoc([
      [0, 4],
      [4, 8],
    ]);
    const view = operationProjection(doc, "op")!;
    const drafts = new Map([["inputs.x.0", new IPF([[1]], [0], [2])]]);
    const ops = commitOps(doc, view, drafts);
    // app0 reads [0:5] before and after: only what changes is sent
    expect(ops.map((o) => [o.op, "id" in o ? o.id : ""])).toEqual([
      ["update_node", "op"],
      ["update_node", "app1"],
    ]);
    const after = applyOps(doc, ops);
    const again = operationProjection(after, "op")!;
    expect(again.ports[0]!.ipf!.toJson()).toEqual(ipf([[1]], [0], [2]));
    const ranges = after.nodes
      .filter((n) => n.id.startsWith("app"))
      .map((n) => (n.body.inputs as { x: { range: unknown }[] }).x[0]!.range);
    expect(ranges).toEqual([r([0], [5]), r([4], [8])]);
    expect(commitOps(after, again, new Map())).toEqual([]);
  });

  it("falls back to the index axes' lengths when the operation has no IPFIndex", () => {
    const doc = windowDoc();
    const op = doc.nodes.find((n) => n.id === "op")!;
    delete op.tags![IPF_INDEX];
    expect(`${operationProjection(doc, "op")!.indexRange}`).toBe(`${new ZRange([0], [8])}`);
  });
});
