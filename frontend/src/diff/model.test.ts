import { describe, expect, it } from "vitest";
import type { LoomDocument } from "../model/document";
import {
  changeRows,
  edgeChanges,
  fieldName,
  shownAt,
  statuses,
  titleIn,
  type VersionDiff,
} from "./model";

const T = "http://tensortapestry.org/schemas/loom/2024-01/node_types.jsd#/nodes/Tensor";
const O = "http://tensortapestry.org/schemas/loom/2024-01/node_types.jsd#/nodes/Operation";
const before = {
  id: "g",
  nodes: [
    { id: "a", type: T, label: "x", body: {} },
    { id: "o", type: O, body: { kernel: "op:add" } },
    { id: "gone", type: T, label: "old", body: {} },
  ],
} as unknown as LoomDocument;
const after = {
  id: "g",
  nodes: [
    { id: "a", type: T, label: "x2", body: {} },
    { id: "o", type: O, body: { kernel: "op:add" } },
    { id: "new", type: T, label: "fresh", body: {} },
  ],
} as unknown as LoomDocument;
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
    expect([...statuses(diff)]).toEqual([
      ["new", "added"],
      ["gone", "removed"],
      ["o", "changed"],
      ["a", "changed"],
    ]);
  });

  it("names fields as people read them", () => {
    expect(fieldName("body.kernel")).toBe("kernel");
    expect(fieldName("tags.urn:geon:2026-11:tag_types.jsd#/tags/Placement")).toBe("Placement");
    expect(fieldName("label")).toBe("label");
  });

  it("lists changes by name, moves last", () => {
    const rows = changeRows(diff, before, after);
    expect(
      rows.map((r) => `${r.status} ${r.name} ${r.fields.join(",")}${r.moved ? " (moved)" : ""}`),
    ).toEqual([
      "added fresh ",
      "removed old ",
      "changed x2 label,dtype",
      "changed op:add Layout (moved)",
    ]);
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

describe("changes named and located (issue 35)", () => {
  const G = "urn:geon:2026-11:tag_types.jsd#/tags/Group";
  const A = "http://tensortapestry.org/schemas/loom/2024-01/node_types.jsd#/nodes/Application";
  const N = "http://tensortapestry.org/schemas/loom/2024-01/node_types.jsd#/nodes/Note";
  const nodes = new Map(
    [
      {
        id: "op1",
        type: O,
        body: { kernel: "op:dot", outputs: { result: [{ tensorId: "up" }] } },
        tags: { [G]: { scope: "/layers.0/mlp/" } },
      },
      { id: "up", type: T, label: "up", body: {}, tags: { [G]: { scope: "layers.0/mlp" } } },
      { id: "app1", type: A, body: { operationId: "op1" } },
      { id: "note1", type: N, body: { message: "why this is here" } },
      { id: "bare", type: T, body: {}, tags: { [G]: { scope: "layers.1" } } },
    ].map((n) => [n.id, n as unknown as LoomDocument["nodes"][number]]),
  );
  it.each([
    ["an operation by name, output and scope", "op1", "op:dot → up in layers.0/mlp"],
    ["a tensor by name and scope", "up", "up in layers.0/mlp"],
    ["an application as its operation's shard", "app1", "a shard of op:dot → up in layers.0/mlp"],
    ["a note by its words", "note1", 'note "why this is here"'],
    ["an unnamed node by its kind, never its id", "bare", "an unnamed Tensor in layers.1"],
    ["a node neither version holds", "zzz", "a node neither version holds"],
  ])("names %s", (_label, id, expected) => {
    expect(titleIn(id, new Map(), nodes)).toBe(expected);
  });

  it("locates a change on each canvas: the node where held, else a neighbour held", () => {
    const edges = [
      { from: "x", to: "new" },
      { from: "new", to: "y" },
    ];
    expect(shownAt("new", (id) => id === "new", edges)).toBe("new");
    expect(shownAt("new", (id) => id === "y", edges)).toBe("y");
    expect(shownAt("new", (id) => id === "x" || id === "y", edges)).toBe("x");
    expect(shownAt("new", () => false, edges)).toBeNull();
  });
});
