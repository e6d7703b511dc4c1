import { describe, expect, it } from "vitest";
import { backEdgeRunY, BACK_STUB, isBackEdge } from "./routes";

const box = (x: number, y: number, w = 100, h = 50) => ({ x, y, w, h });

describe("back edges", () => {
  it("are edges whose target starts left of the source's end", () => {
    expect(isBackEdge(box(0, 0), box(300, 0))).toBe(false);
    expect(isBackEdge(box(600, 0), box(0, 200))).toBe(true);
  });

  it("run through the middle of the gap between the rows when it is free", () => {
    expect(backEdgeRunY(box(600, 0), box(0, 200), [])).toBe(125);
  });

  it("avoid a box of the next row that sits higher than the target", () => {
    const a = box(600, 0);
    const b = box(0, 200);
    const high = box(300, 60, 100, 100); // occupies 60..160 of the 50..200 gap
    expect(backEdgeRunY(a, b, [a, b, high])).toBe(180);
  });

  it("ignore boxes outside the run's horizontal extent", () => {
    const a = box(600, 0);
    const b = box(200, 200);
    expect(backEdgeRunY(a, b, [box(0, 60, 100, 130)])).toBe(125);
  });

  it("go below both boxes when they overlap vertically", () => {
    expect(backEdgeRunY(box(600, 0), box(0, 20), [])).toBe(70 + BACK_STUB);
  });

  it("fall back to the middle when boxes fill the whole gap", () => {
    expect(backEdgeRunY(box(600, 0), box(0, 200), [box(300, 40, 100, 170)])).toBe(125);
  });
});
