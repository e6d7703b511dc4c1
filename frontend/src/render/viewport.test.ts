import { describe, expect, it } from "vitest";
import {
  bounds,
  centreOn,
  fit,
  FIT_MIN_SCALE,
  MIN_SCALE,
  pan,
  showRect,
  toScreen,
  toWorld,
  zoomAt,
} from "./viewport";

describe("viewport", () => {
  it("fits the bounds centred, never enlarging past 1:1", () => {
    expect(fit({ x: 0, y: 0, w: 100, h: 50 }, 1000, 500)).toEqual({ scale: 1, dx: 450, dy: 225 });
    const big = fit({ x: 100, y: 0, w: 2000, h: 100 }, 1064, 400);
    expect(big.scale).toBe(0.5);
    expect(toScreen({ x: 100, y: 0, w: 2000, h: 100 }, big)).toEqual({
      x: 32,
      y: 175,
      w: 1000,
      h: 50,
    });
  });

  it("zooms about the pointer: the point under it stays put", () => {
    const vp = { scale: 1, dx: 10, dy: 20 };
    const at = { x: 300, y: 200 };
    const before = toWorld(at, vp);
    const after = zoomAt(vp, 2, at);
    expect([after.scale, toWorld(at, after)]).toEqual([2, before]);
  });

  it("clamps the zoom", () => {
    expect(zoomAt({ scale: 2, dx: 0, dy: 0 }, 10, { x: 0, y: 0 }).scale).toBe(3);
    expect(zoomAt({ scale: 0.1, dx: 0, dy: 0 }, 0.01, { x: 0, y: 0 }).scale).toBe(0.05);
  });

  it("fits a graph wider than the closest zoom out whole, and zooms in from there but not further out", () => {
    // given 11,425 boxes expanded: 60,000 graph px wide
    const huge = fit({ x: 0, y: 0, w: 60000, h: 3000 }, 730, 700);
    expect(huge.scale).toBeLessThan(MIN_SCALE);
    expect(toScreen({ x: 0, y: 0, w: 60000, h: 3000 }, huge).w).toBeCloseTo(730 - 64);
    expect(fit({ x: 0, y: 0, w: 1e9, h: 1 }, 730, 700).scale).toBe(FIT_MIN_SCALE);
    expect(zoomAt(huge, 0.5, { x: 0, y: 0 }).scale).toBe(huge.scale);
    expect(zoomAt(huge, 2, { x: 0, y: 0 }).scale).toBe(huge.scale * 2);
  });

  it("shows a rect centred, readable, and whole", () => {
    // a small edge far out: zoomed to 0.6 and centred
    expect(
      showRect({ scale: 0.1, dx: 0, dy: 0 }, { x: 100, y: 100, w: 200, h: 100 }, 800, 600),
    ).toEqual({ scale: 0.6, dx: 400 - 200 * 0.6, dy: 300 - 150 * 0.6 });
    // a long one: fitted
    expect(
      showRect({ scale: 1, dx: 0, dy: 0 }, { x: 0, y: 0, w: 1408, h: 100 }, 800, 600).scale,
    ).toBe(0.5);
  });

  it("pans and centres", () => {
    expect(pan({ scale: 2, dx: 1, dy: 1 }, 5, -5)).toEqual({ scale: 2, dx: 6, dy: -4 });
    expect(centreOn({ scale: 2, dx: 0, dy: 0 }, { x: 10, y: 10, w: 20, h: 20 }, 200, 100)).toEqual({
      scale: 2,
      dx: 60,
      dy: 10,
    });
  });

  it("bounds every rect, and nothing as an empty rect", () => {
    expect(
      bounds([
        { x: 5, y: 5, w: 10, h: 10 },
        { x: -5, y: 0, w: 1, h: 1 },
      ]),
    ).toEqual({ x: -5, y: 0, w: 20, h: 15 });
    expect(bounds([])).toEqual({ x: 0, y: 0, w: 0, h: 0 });
  });
});
