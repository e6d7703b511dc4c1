import { describe, expect, it } from "vitest";
import { addTensor } from "./authorTensors";
import { addOperation } from "./authorOperations";
import { LAYOUT, type LoomDocument } from "./document";
import { applyOps } from "./edits";
import { clearLayout, editOperation, editProjection, editTensor } from "./nodeEdits";

function withTensor(): { doc: LoomDocument; x: string } {
  const { ops, id } = addTensor(
    { id: "g", nodes: [] },
    { label: "x", axes: [], dtype: "float32", at: { x: 0, y: 0 } },
  );
  return { doc: applyOps({ id: "g", nodes: [] }, ops), x: id };
}

describe("editTensor", () => {
  it.each([
    ["nothing changed", "x", "float32", []],
    ["a new label, trimmed", " y ", "float32", [{ label: "y" }]],
    ["an emptied label is removed", "", "float32", [{ label: null }]],
    ["a new dtype", "x", "int8", [{ body: { dtype: "int8" } }]],
  ])("%s", (_label, label, dtype, expected) => {
    const { doc, x } = withTensor();
    expect(editTensor(doc, x, label, [], dtype)).toEqual(
      expected.map((change) => ({ op: "update_node", id: x, ...change })),
    );
  });
});

describe("editOperation", () => {
  it("changes the params first, then derives the operation again", () => {
    const { ops, id } = addOperation({ id: "g", nodes: [] }, "op:relu", { x: 0, y: 0 });
    const doc = applyOps({ id: "g", nodes: [] }, ops);
    const label = doc.nodes.find((n) => n.id === id)!.label ?? "";
    expect(editOperation(doc, id, label, { alpha: 1 })[0]).toEqual({
      op: "update_node",
      id,
      body: { params: { alpha: 1 } },
    });
  });
});

describe("editProjection", () => {
  it("refuses an operation that is gone", () => {
    expect(() => editProjection({ id: "g", nodes: [] }, "nope", new Map())).toThrow(
      'operation "nope" no longer exists',
    );
  });
});

describe("clearLayout", () => {
  it("unpins only the nodes that carry a Layout tag", () => {
    const { doc, x } = withTensor();
    const unplaced = applyOps(doc, [{ op: "update_node", id: x, tags: { [LAYOUT]: null } }]);
    expect([clearLayout(doc, [x, "nope"]), clearLayout(unplaced, [x])]).toEqual([
      [{ op: "update_node", id: x, tags: { [LAYOUT]: null } }],
      [],
    ]);
  });
});
