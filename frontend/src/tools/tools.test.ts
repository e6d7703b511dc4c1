import { describe, expect, it } from "vitest";
import {
  cancel,
  dragOffset,
  idle,
  pointerDown,
  pointerMove,
  pointerUp,
  type Hit,
  type Tool,
} from "./tools";

const p = (x: number, y: number) => ({ x, y });
const tensor = (id: string, zone: Hit["zone"] = "body"): Hit => ({ id, kind: "tensor", zone });
const op = (id: string): Hit => ({ id, kind: "operation", zone: "body" });
const plain = { shift: false };

describe("tools", () => {
  it("a click selects the node under the pointer, and nothing moves", () => {
    const down = pointerDown(idle(), tensor("a"), p(10, 10), p(10, 10), plain, []);
    expect(down.effect).toEqual({ type: "select", ids: ["a"], additive: false });
    const up = pointerUp(down.tool, tensor("a"));
    expect([up.tool, up.effect]).toEqual([idle(), { type: "none" }]);
  });

  it("a press that moves past the slop drags the whole selection, as one move at the end", () => {
    let t = pointerDown(idle(), tensor("a"), p(0, 0), p(0, 0), plain, ["a", "b"]).tool;
    t = pointerMove(t, null, p(2, 0), p(2, 0), ["a", "b"]).tool;
    expect(t.kind).toBe("pressing");
    t = pointerMove(t, null, p(30, 12), p(30, 12), ["a", "b"]).tool;
    expect([t.kind, dragOffset(t, "b"), dragOffset(t, "c")]).toEqual(["dragging", p(30, 12), null]);
    expect(pointerUp(t, null).effect).toEqual({ type: "move", ids: ["a", "b"], delta: p(30, 12) });
  });

  it("escape during a drag drops it: no move is sent", () => {
    let t = pointerDown(idle(), tensor("a"), p(0, 0), p(0, 0), plain, []).tool;
    t = pointerMove(t, null, p(50, 0), p(50, 0), ["a"]).tool;
    const step = cancel(t);
    expect([step.tool, step.effect]).toEqual([idle(), { type: "none" }]);
  });

  it("dragging from a tensor's handle onto an operation connects them", () => {
    let t: Tool = pointerDown(idle(), tensor("x", "handle"), p(0, 0), p(0, 0), plain, []).tool;
    t = pointerMove(t, op("dot"), p(100, 0), p(100, 0), []).tool;
    expect(t).toEqual({ kind: "connecting", from: "x", at: p(100, 0), over: "dot" });
    expect(pointerUp(t, op("dot")).effect).toEqual({ type: "connect", from: "x", to: "dot" });
  });

  it("a connection dropped on empty canvas connects nothing", () => {
    let t: Tool = pointerDown(idle(), tensor("x", "handle"), p(0, 0), p(0, 0), plain, []).tool;
    t = pointerMove(t, null, p(100, 0), p(100, 0), []).tool;
    expect(pointerUp(t, null).effect).toEqual({ type: "none" });
  });

  it("dragging empty canvas pans by the pointer's movement", () => {
    let t = pointerDown(idle(), null, p(0, 0), p(5, 5), plain, []).tool;
    const step = pointerMove(t, null, p(0, 0), p(15, 0), []);
    t = step.tool;
    expect(step.effect).toEqual({ type: "pan", dx: 10, dy: -5 });
  });

  it("shift-dragging empty canvas selects a rectangle, added to the selection", () => {
    let t = pointerDown(idle(), null, p(0, 0), p(0, 0), { shift: true }, []).tool;
    t = pointerMove(t, null, p(40, 30), p(40, 30), []).tool;
    expect(pointerUp(t, null).effect).toEqual({
      type: "selectRect",
      from: p(0, 0),
      to: p(40, 30),
      additive: true,
    });
  });

  it("shift-click adds to the selection", () => {
    expect(pointerDown(idle(), op("o"), p(0, 0), p(0, 0), { shift: true }, ["a"]).effect).toEqual({
      type: "select",
      ids: ["o"],
      additive: true,
    });
  });

  it("escape when idle clears the selection", () => {
    expect(cancel(idle()).effect).toEqual({ type: "select", ids: [], additive: false });
  });
});
