import { describe, expect, it } from "vitest";
import type { GraphView } from "../model/document";
import { layoutView } from "./layout";

const chain: GraphView = {
  boxes: [
    { id: "a", kind: "tensor", title: "a", subtitle: "" },
    { id: "op", kind: "operation", title: "op:negative", subtitle: "" },
    { id: "b", kind: "tensor", title: "b", subtitle: "", pinned: { x: 900, y: 400 } },
  ],
  edges: [
    { from: "a", to: "op" },
    { from: "op", to: "b" },
  ],
};

describe("layoutView", () => {
  it("places the data flow left to right", async () => {
    const layout = await layoutView(chain);
    expect(layout.rects.get("a")!.x < layout.rects.get("op")!.x).toBe(true);
  });

  it("keeps a node with a Layout tag where the tag puts it", async () => {
    const layout = await layoutView(chain);
    expect(layout.rects.get("b")).toEqual({ x: 900, y: 400, w: 190, h: 54 });
    expect([layout.width, layout.height]).toEqual([900 + 190 + 24, 400 + 54 + 24]);
  });
});
