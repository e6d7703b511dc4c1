import { describe, expect, it } from "vitest";
import type { Box, GraphView } from "../model/document";
import ELK from "elkjs/lib/elk.bundled.js";
import {
  boxSize,
  chipWidth,
  fitScale,
  gridLayout,
  keptLayout,
  layoutInput,
  runLayout,
  tooWide,
  type Layout,
} from "./layout";
import { bounds } from "./viewport";

const layoutView = async (view: GraphView): Promise<Layout> => ({
  rects: new Map(await runLayout(new ELK(), layoutInput(view))),
});

const box = (id: string, kind: "tensor" | "operation", pinned?: { x: number; y: number }) => ({
  id,
  kind,
  title: id,
  subtitle: "",
  chips: [],
  pinned,
});
const chain: GraphView = {
  boxes: [
    box("a", "tensor"),
    box("op", "operation"),
    box("b", "tensor"),
    box("p", "tensor", { x: 900, y: 400 }),
  ],
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
    expect([rects.get("p")!.y, rects.get("a")!.y, rects.get("op")!.x]).toEqual([
      400,
      400 + 62 - 18 + 6 + 40 + 24,
      264,
    ]);
  });

  it("sizes a tensor for its axis chips", () => {
    const chips = [
      { ref: "H", axis: "H", length: 2 },
      { ref: "W-1", axis: "W", length: 3 },
    ];
    expect([
      chipWidth("W-1", 3),
      boxSize({ kind: "tensor", title: "x", subtitle: "float32", chips }),
    ]).toEqual([51, { w: 140, h: 62 }]);
  });
});

/** A chain t0 -> op0 -> t1 -> op1 -> ... of ``n`` operations, the first ``pinned`` nodes placed. */
function longChain(n: number, pin?: { x: number; y: number }): GraphView {
  const boxes = [box("t0", "tensor", pin)];
  const edges = [];
  for (let i = 0; i < n; i++) {
    boxes.push(box(`op${i}`, "operation"), box(`t${i + 1}`, "tensor"));
    edges.push(
      { from: `t${i}`, to: `op${i}`, port: "tensor" },
      { from: `op${i}`, to: `t${i + 1}`, port: "result" },
    );
  }
  return { boxes, edges };
}

describe("long chains", () => {
  it("wraps a chain too wide for the screen into rows that fit it at a readable scale", async () => {
    const one = await layoutView(longChain(10));
    const b = bounds(one.rects.values());
    // one row would be 21 boxes wide: about 3,500 px, a fit scale under 0.3
    expect(tooWide(21 * 170, 62)).toBe(true);
    expect(b.w / b.h < 3).toBe(true);
    expect(fitScale(b.w, b.h) >= 0.5).toBe(true);
    // and it still reads in order: each row left to right, the next row below
    const r = (id: string) => one.rects.get(id)!;
    expect(r("t0").x < r("op0").x && r("op0").x < r("t1").x).toBe(true);
    expect(r("t10").y > r("t0").y).toBe(true);
  });

  it("keeps a short chain on one row, as before", async () => {
    const layout = await layoutView(longChain(2));
    const ys = [...layout.rects.values()].map((r) => r.y + r.h / 2);
    expect(Math.max(...ys) - Math.min(...ys) < 10).toBe(true);
    expect([tooWide(968, 50), tooWide(1100, 500)]).toEqual([false, false]);
  });

  it("keeps a placed node where its Layout tag puts it when the rest is wrapped", async () => {
    const layout = await layoutView(longChain(10, { x: 5, y: 7 }));
    expect(layout.rects.get("t0")).toEqual({ x: 5, y: 7, ...boxSize(box("t0", "tensor")) });
    const free = [...layout.rects].filter(([id]) => id !== "t0").map(([, r]) => r);
    expect(Math.min(...free.map((f) => f.y)) >= 7 + boxSize(box("t0", "tensor")).h + 40).toBe(true);
  });
});

describe("keptLayout", () => {
  const box = (id: string, pinned?: { x: number; y: number }): Box => ({
    id,
    kind: "tensor",
    title: id,
    chips: [],
    subtitle: "",
    ...(pinned ? { pinned } : {}),
  });

  it("keeps placed boxes and boxes laid out before, and says when others need ELK", () => {
    const previous = { rects: new Map([["old", { x: 5, y: 6, w: 1, h: 1 }]]) };
    const view: GraphView = {
      boxes: [box("placed", { x: 1, y: 2 }), box("old"), box("new")],
      edges: [],
    };
    const { layout, complete } = keptLayout(view, previous);
    expect([[...layout.rects].map(([id, r]) => [id, r.x, r.y]), complete]).toEqual([
      [
        ["placed", 1, 2],
        ["old", 5, 6],
      ],
      false,
    ]);
  });
});
