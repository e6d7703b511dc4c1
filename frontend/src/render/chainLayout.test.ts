import { describe, expect, it } from "vitest";
import { LAYER_GAP, pathOrder, placePath, ROW_GAP } from "./chainLayout";

const item = (id: string, w = 100, h = 40) => ({ id, w, h });
const e = (from: string, to: string) => ({ from, to });

describe("pathOrder", () => {
  it.each([
    [
      "a path, listed out of order",
      [item("b"), item("a"), item("c")],
      [e("b", "c"), e("a", "b")],
      ["a", "b", "c"],
    ],
    ["one item", [item("a")], [], ["a"]],
    ["a repeated edge counts once", [item("a"), item("b")], [e("a", "b"), e("a", "b")], ["a", "b"]],
    ["a branch", [item("a"), item("b"), item("c")], [e("a", "b"), e("a", "c")], null],
    ["a join", [item("a"), item("b"), item("c")], [e("a", "c"), e("b", "c")], null],
    ["two pieces", [item("a"), item("b"), item("c")], [e("a", "b")], null],
    ["a cycle", [item("a"), item("b")], [e("a", "b"), e("b", "a")], null],
    ["nothing", [], [], null],
  ])("%s", (_label, items, edges, expected) => {
    expect(pathOrder(items, edges)?.map((b) => b.id) ?? null).toEqual(expected);
  });
});

describe("placePath", () => {
  const pad = { top: 10, left: 20, bottom: 30, right: 40 };

  it("places a path left to right, centred on its tallest box", () => {
    const placed = placePath([item("a", 100, 40), item("b", 50, 60)], pad);
    expect(placed).toEqual({
      w: 20 + 100 + LAYER_GAP + 50 + 40,
      h: 10 + 60 + 30,
      rects: [
        ["a", { x: 20, y: 20, w: 100, h: 40 }],
        ["b", { x: 20 + 100 + LAYER_GAP, y: 10, w: 50, h: 60 }],
      ],
    });
  });

  it("cuts it into rows no wider than the limit, read left to right, top to bottom", () => {
    const placed = placePath(
      ["a", "b", "c"].map((id) => item(id)),
      pad,
      100 + LAYER_GAP + 100,
    );
    expect(placed.rects.map(([id, r]) => [id, r.x, r.y])).toEqual([
      ["a", 20, 10],
      ["b", 20 + 100 + LAYER_GAP, 10],
      ["c", 20, 10 + 40 + ROW_GAP],
    ]);
    expect([placed.w, placed.h]).toEqual([20 + 260 + 40, 10 + 40 + ROW_GAP + 40 + 30]);
  });
});
