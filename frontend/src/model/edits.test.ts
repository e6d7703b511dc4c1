import { describe, expect, it } from "vitest";
import { LAYOUT, TENSOR, type LoomDocument } from "./document";
import { applyOps, EditError, invertOps, mergePatch, type EditOp } from "./edits";

const doc: LoomDocument = {
  id: "g",
  nodes: [
    {
      id: "x",
      type: TENSOR,
      label: "x",
      body: { dtype: "float32", range: { start: [0], end: [2] } },
      tags: { [LAYOUT]: { x: 1, y: 2 } },
    },
    { id: "y", type: TENSOR, body: { dtype: "int32", range: { start: [0], end: [3] } } },
  ],
};

const byId = (d: LoomDocument) => [...d.nodes].sort((a, b) => a.id.localeCompare(b.id));

describe("applyOps and invertOps", () => {
  it.each<[string, EditOp[]]>([
    [
      "add a node",
      [
        {
          op: "add_node",
          node: { id: "z", type: TENSOR, body: { dtype: "int8", range: { start: [], end: [] } } },
        },
      ],
    ],
    ["remove a node", [{ op: "remove_node", id: "x" }]],
    ["merge a body field", [{ op: "update_node", id: "x", body: { dtype: "float64" } }]],
    [
      "add a label and a tag",
      [{ op: "update_node", id: "y", label: "why", tags: { [LAYOUT]: { x: 5, y: 6 } } }],
    ],
    [
      "remove a label and a tag",
      [{ op: "update_node", id: "x", label: null, tags: { [LAYOUT]: null } }],
    ],
    [
      "several ops on one node",
      [
        { op: "update_node", id: "x", body: { dtype: "int8" } },
        { op: "update_node", id: "x", body: { dtype: "int16" } },
        { op: "remove_node", id: "x" },
      ],
    ],
  ])("%s: the inverse restores the document", (_label, ops) => {
    const after = applyOps(doc, ops);
    expect(after).not.toEqual(doc);
    // node order carries no meaning (an undone removal comes back at the end)
    expect(byId(applyOps(after, invertOps(doc, ops)))).toEqual(byId(doc));
  });

  it("merges nested objects and replaces arrays", () => {
    expect(mergePatch({ a: { b: 1, c: 2 }, d: [1, 2] }, { a: { b: null, e: 3 }, d: [3] })).toEqual({
      a: { c: 2, e: 3 },
      d: [3],
    });
  });

  it.each<[string, EditOp, string]>([
    ["an unknown node", { op: "remove_node", id: "nope" }, 'node "nope" does not exist'],
    [
      "a duplicate id",
      { op: "add_node", node: { id: "x", type: TENSOR, body: {} } },
      'node "x" already exists; expected a new id',
    ],
  ])("refuses %s and changes nothing", (_label, op, message) => {
    const before = structuredClone(doc);
    expect(() =>
      applyOps(doc, [{ op: "update_node", id: "x", body: { dtype: "int8" } }, op]),
    ).toThrow(new EditError(message));
    expect(doc).toEqual(before);
  });
});
