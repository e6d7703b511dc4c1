import { describe, expect, it } from "vitest";
import type { LoomDocument } from "../model/document";
import { changeRows, edgeChanges, fieldName, statuses, type VersionDiff } from "./model";

const T = "http://tensortapestry.org/schemas/loom/2024-01/node_types.jsd#/nodes/Tensor";
const O = "http://tensortapestry.org/schemas/loom/2024-01/node_types.jsd#/nodes/Operation";
const before = { id: "g", nodes: [{ id: "a", type: T, label: "x", body: {} }, { id: "o", type: O, body: { kernel: "op:add" } }, { id: "gone", type: T, label: "old", body: {} }] } as unknown as LoomDocument;
const after = { id: "g", nodes: [{ id: "a", type: T, label: "x2", body: {} }, { id: "o", type: O, body: { kernel: "op:add" } }, { id: "new", type: T, label: "fresh", body: {} }] } as unknown as LoomDocument;
const diff: VersionDiff = {
  base: 1,
  target: 2,
  added: ["new"],
  removed: ["gone"],
  changed: [
    { id: "o", fields: ["tags.urn:geon:2026-11:tag_types.jsd#/tags/Layout"] },
    { id: "a", fields: ["label", "body.dtype"] },
  ],
};

describe("diff model", () => {
  it("gives each node its status", () => {
    expect([...statuses(diff)]).toEqual([["new", "added"], ["gone", "removed"], ["o", "changed"], ["a", "changed"]]);
  });

  it("names fields as people read them", () => {
    expect(fieldName("body.kernel")).toBe("kernel");
    expect(fieldName("tags.urn:geon:2026-11:tag_types.jsd#/tags/Placement")).toBe("Placement");
    expect(fieldName("label")).toBe("label");
  });

  it("lists changes by name, moves last", () => {
    const rows = changeRows(diff, before, after);
    expect(rows.map((r) => `${r.status} ${r.name} ${r.fields.join(",")}${r.moved ? " (moved)" : ""}`)).toEqual(["added fresh ", "removed old ", "changed x2 label,dtype", "changed op:add Layout (moved)"]);
  });
});

describe("edge changes", () => {
  it("finds the edges one version has and the other lacks", () => {
    const found = edgeChanges(
      [
        { from: "x", to: "op" },
        { from: "op", to: "y" },
      ],
      [
        { from: "x", to: "op" },
        { from: "op", to: "z" },
        { from: "w", to: "op" },
      ],
    );
    expect([...found.added]).toEqual(["op->z", "w->op"]);
    expect([...found.removed]).toEqual(["op->y"]);
  });
});
