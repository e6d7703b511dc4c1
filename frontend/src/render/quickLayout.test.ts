import ELK from "elkjs/lib/elk.bundled.js";
import { describe, expect, it } from "vitest";
import { placeLevel } from "./layout";
import { quickLevel } from "./quickLayout";
import { intersects } from "./viewport";

const item = (id: string, w = 100, h = 40) => ({ id, w, h });
const e = (from: string, to: string) => ({ from, to });
const at = (placed: ReturnType<typeof quickLevel>) => new Map(placed.rects);

describe("quickLevel: a level placed without ELK until ELK's layout arrives", () => {
  it("puts each box right of its inputs, a fork's branches one above the other, and overlaps nothing", () => {
    // given a fork and a join (a residual connection), with an edge closing a cycle
    const items = [item("x"), item("f", 140), item("g"), item("y", 90, 60), item("z")];
    const edges = [e("x", "f"), e("x", "g"), e("f", "y"), e("g", "y"), e("x", "y"), e("y", "z")];
    const placed = quickLevel(
      items,
      [...edges, e("z", "x")],
      "[top=34,left=14,bottom=14,right=14]",
    );
    const r = at(placed);
    // then every box is placed, inside the padding and the size reported
    expect([...r.keys()].sort()).toEqual(["f", "g", "x", "y", "z"]);
    for (const b of r.values()) {
      expect(b.x).toBeGreaterThanOrEqual(14);
      expect(b.y).toBeGreaterThanOrEqual(34);
      expect(b.x + b.w).toBeLessThanOrEqual(placed.w - 14);
      expect(b.y + b.h).toBeLessThanOrEqual(placed.h - 14);
    }
    // each box lies right of every input it has (the cycle's closing edge aside)
    for (const { from, to } of edges)
      expect(r.get(to)!.x).toBeGreaterThan(r.get(from)!.x + r.get(from)!.w);
    // the two branches share a layer, one above the other, listed order kept
    expect(r.get("f")!.x + r.get("f")!.w / 2).toBe(r.get("g")!.x + r.get("g")!.w / 2);
    expect(r.get("g")!.y).toBeGreaterThanOrEqual(r.get("f")!.y + r.get("f")!.h);
    const rects = [...r.values()];
    rects.forEach((a, i) =>
      rects.slice(i + 1).forEach((b) => expect(intersects(a, b)).toBe(false)),
    );
  });

  it("places a path exactly as the worker does, so ELK's answer moves nothing there", async () => {
    // given a chain too wide for one row
    const items = Array.from({ length: 12 }, (_, i) => item(`n${i}`, 160));
    const edges = items.slice(1).map((b, i) => e(`n${i}`, b.id));
    // then the provisional layout is the worker's, wrapped into rows
    const quick = quickLevel(items, edges);
    expect(quick).toEqual(await placeLevel(new ELK(), items, edges));
    expect(new Set(quick.rects.map(([, r]) => r.y)).size).toBeGreaterThan(1);
  });

  it("cuts a wide branching level into rows of layers", () => {
    // given 12 layers of a fork and a join each
    const items = [item("s")];
    const edges = [];
    for (let i = 0; i < 12; i++) {
      items.push(item(`a${i}`), item(`b${i}`), item(`j${i}`));
      const from = i ? `j${i - 1}` : "s";
      edges.push(e(from, `a${i}`), e(from, `b${i}`), e(`a${i}`, `j${i}`), e(`b${i}`, `j${i}`));
    }
    const placed = quickLevel(items, edges);
    // then it is wrapped (more than one row), and still no two boxes overlap
    expect(placed.w).toBeLessThan(placed.h * 3);
    const rects = placed.rects.map(([, r]) => r);
    rects.forEach((a, i) =>
      rects.slice(i + 1).forEach((b) => expect(intersects(a, b)).toBe(false)),
    );
  });
});
