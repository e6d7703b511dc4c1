import { describe, expect, it } from "vitest";
import { TENSOR } from "../model/document";
import { effectOutcome } from "./effects";

const ui = {
  selected: ["a"],
  rects: new Map([
    ["a", { x: 0, y: 0, w: 100, h: 50 }],
    ["b", { x: 200, y: 0, w: 100, h: 50 }],
  ]),
  vp: { scale: 1, dx: 0, dy: 0 },
};

describe("effectOutcome", () => {
  it.each([
    [
      "a click selects",
      { type: "select" as const, ids: ["b"], additive: false },
      { kind: "select", ids: ["b"] },
    ],
    [
      "shift-click adds",
      { type: "select" as const, ids: ["b"], additive: true },
      { kind: "select", ids: ["a", "b"] },
    ],
    [
      "shift-click on a selected node removes it",
      { type: "select" as const, ids: ["a"], additive: true },
      { kind: "select", ids: [] },
    ],
    [
      "a rectangle selects what it touches",
      {
        type: "selectRect" as const,
        from: { x: 150, y: -10 },
        to: { x: 210, y: 10 },
        additive: false,
      },
      { kind: "select", ids: ["b"] },
    ],
    [
      "a pan moves the view",
      { type: "pan" as const, dx: 5, dy: -5 },
      { kind: "view", vp: { scale: 1, dx: 5, dy: -5 } },
    ],
    ["nothing", { type: "none" as const }, { kind: "none" }],
  ])("%s", (_label, effect, expected) => {
    expect(effectOutcome(effect, ui)).toEqual(expected);
  });

  it("a drag builds one move edit of the dragged boxes", () => {
    const outcome = effectOutcome({ type: "move", ids: ["a", "b"], delta: { x: 10, y: 20 } }, ui);
    expect(outcome.kind === "edit" && outcome.name).toBe("move 2");
    const doc = {
      id: "g",
      nodes: ["a", "b"].map((id) => ({ id, type: TENSOR, label: id, body: { dtype: "float32" } })),
    };
    const ops = outcome.kind === "edit" ? outcome.build(doc) : [];
    expect(ops.map((op) => (op.op === "update_node" ? [op.id, op.tags] : op.op))).toEqual([
      ["a", { "urn:geon:2026-11:tag_types.jsd#/tags/Layout": { x: 10, y: 20 } }],
      ["b", { "urn:geon:2026-11:tag_types.jsd#/tags/Layout": { x: 210, y: 20 } }],
    ]);
  });
});
