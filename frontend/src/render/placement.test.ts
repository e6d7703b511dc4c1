import { describe, expect, it } from "vitest";
import { LAYOUT, TENSOR } from "../model/document";
import { clearSpot, freeSpot, pinnedClip, revealing, spotRightOf } from "./placement";
import { bounds, centreOn, fit } from "./viewport";

const rects = new Map([
  ["a", { x: 0, y: 0, w: 100, h: 50 }],
  ["b", { x: 0, y: 100, w: 100, h: 50 }],
]);
const size = { width: 800, height: 600 };

describe("clearSpot", () => {
  it.each([
    ["a free spot stays", { x: 500, y: 0 }, { x: 500, y: 0 }],
    ["over a box it moves down until clear", { x: 0, y: 0 }, { x: 0, y: 180 }],
  ])("%s", (_label, p, expected) => {
    expect(clearSpot(rects.values(), p)).toEqual(expected);
  });
});

describe("spotRightOf", () => {
  it.each([
    ["right of the boxes, mid-height", ["a"], { x: 170, y: 2 }],
    ["none drawn", ["nope"], null],
  ])("%s", (_label, ids, expected) => {
    expect(spotRightOf(rects, ids)).toEqual(expected);
  });
});

describe("freeSpot", () => {
  it("is the middle of the view, clear of the boxes", () => {
    expect(freeSpot(new Map(), { scale: 1, dx: 0, dy: 0 }, size)).toEqual({ x: 320, y: 270 });
  });
});

describe("revealing", () => {
  const vp = { scale: 1, dx: 0, dy: 0 };
  const withBox = (x: number) => new Map([...rects, ["new", { x, y: 0, w: 100, h: 50 }]]);

  it("leaves the view when the new boxes are in it", () => {
    expect(revealing(rects, ["a"], vp, size)).toBeNull();
  });

  it("fits everything when that stays readable", () => {
    const all = withBox(1000);
    expect(revealing(all, ["new"], vp, size)).toEqual(
      fit(bounds(all.values()), size.width, size.height),
    );
  });

  it("else centres on the first new box", () => {
    const all = withBox(5000);
    expect(revealing(all, ["new"], vp, size)).toEqual(
      centreOn(vp, all.get("new")!, size.width, size.height),
    );
  });
});

describe("pinnedClip", () => {
  it("pins copies without a Layout tag where the original is drawn", () => {
    const clip = {
      nodes: [
        { id: "a", type: TENSOR, body: {} },
        { id: "c", type: TENSOR, body: {}, tags: { [LAYOUT]: { x: 9, y: 9 } } },
      ],
    };
    expect(pinnedClip(clip, rects).nodes.map((n) => n.tags?.[LAYOUT])).toEqual([
      { x: 0, y: 0 },
      { x: 9, y: 9 },
    ]);
  });
});
