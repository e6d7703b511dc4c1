import { describe, expect, it } from "vitest";
import type { GraphView } from "../model/document";
import ELK from "elkjs/lib/elk.bundled.js";
import { boxSize, chipWidth, gridLayout, layoutInput, runLayout, type Layout } from "./layout";

const layoutView = async (view: GraphView): Promise<Layout> => ({ rects: new Map(await runLayout(new ELK(), layoutInput(view))) });

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

  it("without a worker, places the free nodes on a grid below the placed ones", () => {
    const rects = new Map(gridLayout(layoutInput(chain)));
    expect([rects.get("p")!.y, rects.get("a")!.y, rects.get("op")!.x]).toEqual([400, 400 + 62 - 18 + 6 + 40 + 24, 264]);
  });

  it("sizes a tensor for its axis chips", () => {
    const chips = [{ ref: "H", axis: "H", length: 2 }, { ref: "W-1", axis: "W", length: 3 }];
    expect([chipWidth("W-1", 3), boxSize({ kind: "tensor", title: "x", subtitle: "float32", chips })]).toEqual([51, { w: 140, h: 62 }]);
  });
});
