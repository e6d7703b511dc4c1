import { describe, expect, it } from "vitest";
import type { GraphView } from "../model/document";
import { boxSize, chipWidth, layoutView } from "./layout";

const box = (id: string, kind: "tensor" | "operation", pinned?: { x: number; y: number }) => ({ id, kind, title: id, subtitle: "", chips: [], pinned });
const chain: GraphView = {
  boxes: [box("a", "tensor"), box("op", "operation"), box("b", "tensor"), box("p", "tensor", { x: 900, y: 400 })],
  edges: [
    { from: "a", to: "op", port: "tensor" },
    { from: "op", to: "b", port: "result" },
  ],
};

describe("layoutView", () => {
  it("places the data flow left to right", async () => {
    const layout = await layoutView(chain);
    const x = (id: string) => layout.rects.get(id)!.x;
    expect(x("a") < x("op") && x("op") < x("b")).toBe(true);
  });

  it("keeps a node with a Layout tag where the tag puts it, and places the rest below it", async () => {
    const layout = await layoutView(chain);
    expect(layout.rects.get("p")).toEqual({ x: 900, y: 400, ...boxSize(box("p", "tensor")) });
    expect(layout.rects.get("a")!.y >= 400 + boxSize(box("p", "tensor")).h + 40).toBe(true);
  });

  it("sizes a tensor for its axis chips", () => {
    const chips = [{ ref: "H", axis: "H", length: 2 }, { ref: "W-1", axis: "W", length: 3 }];
    expect([chipWidth("W-1", 3), boxSize({ kind: "tensor", title: "x", subtitle: "float32", chips })]).toEqual([51, { w: 140, h: 62 }]);
  });
});
