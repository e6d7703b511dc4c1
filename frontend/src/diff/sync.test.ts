import { describe, expect, it } from "vitest";
import { toScreen } from "../render/viewport";
import { SharedViewport } from "./sync";

describe("the diff page's one viewport", () => {
  it("a drag pans by the pointer's travel and redraws every step", () => {
    let redraws = 0;
    const shared = new SharedViewport({ scale: 1, dx: 0, dy: 0 }, () => redraws++);
    shared.move({ x: 50, y: 50 }); // not pressed: nothing moves
    expect(shared.vp).toEqual({ scale: 1, dx: 0, dy: 0 });
    shared.press({ x: 10, y: 10 });
    shared.move({ x: 40, y: 20 });
    shared.move({ x: 70, y: 40 });
    shared.release();
    shared.move({ x: 500, y: 500 });
    expect(shared.vp).toEqual({ scale: 1, dx: 60, dy: 30 });
    expect(redraws).toBe(2);
  });

  it("a wheel step zooms about the pointer, the point under it stays put", () => {
    const shared = new SharedViewport({ scale: 1, dx: 20, dy: 10 }, () => undefined);
    const under = { x: 120, y: 80, w: 0, h: 0 };
    const before = toScreen(under, shared.vp);
    shared.wheel(-200, { x: before.x, y: before.y });
    expect(shared.vp.scale).toBeCloseTo(Math.exp(0.3));
    const after = toScreen(under, shared.vp);
    expect(after.x).toBeCloseTo(before.x);
    expect(after.y).toBeCloseTo(before.y);
  });
});
