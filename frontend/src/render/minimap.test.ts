import { describe, expect, it } from "vitest";
import { minimapToWorld, minimapWorld } from "./minimap";

describe("minimap", () => {
  it("shows the graph with a margin of 40", () => {
    expect(
      minimapWorld([
        { x: 0, y: 0, w: 100, h: 50 },
        { x: 200, y: 100, w: 100, h: 50 },
      ]),
    ).toEqual({ x: -40, y: -40, w: 380, h: 230 });
  });

  it.each([
    ["the centre is the world's centre", { x: 100, y: 50 }, { x: 150, y: 50 }],
    ["the world's corner, centred across the spare height", { x: 0, y: 50 / 3 }, { x: 0, y: 0 }],
  ])("%s", (_label, click, expected) => {
    const p = minimapToWorld(click, {
      width: 200,
      height: 100,
      world: { x: 0, y: 0, w: 300, h: 100 },
    });
    const round = (v: number) => Number(v.toFixed(9)) + 0; // + 0: no -0
    expect({ x: round(p.x), y: round(p.y) }).toEqual(expected);
  });
});
