import { describe, expect, it } from "vitest";
import type { EditOp } from "../model/edits";
import { History } from "./history";

const op = (id: string): EditOp => ({ op: "remove_node", id });
const entry = (name: string) => ({ name, ops: [op(`${name}-do`)], inverse: [op(`${name}-undo`)] });

describe("History", () => {
  it("undoes the last action first and redoes it", () => {
    const h = new History();
    h.record(entry("a"));
    h.record(entry("b"));
    expect(h.undo()?.inverse).toEqual([op("b-undo")]);
    expect(h.names()).toEqual({ undo: ["a"], redo: ["b"] });
    expect(h.redo()?.ops).toEqual([op("b-do")]);
    expect(h.names()).toEqual({ undo: ["a", "b"], redo: [] });
  });

  it("a new action clears what could be redone", () => {
    const h = new History();
    h.record(entry("a"));
    h.undo();
    h.record(entry("c"));
    expect([h.canRedo, h.names().undo]).toEqual([false, ["c"]]);
  });

  it("everything between a mark and its commit is one step, undone in reverse order", () => {
    const h = new History();
    h.mark("drag");
    h.record(entry("m1"));
    h.record(entry("m2"));
    h.commit();
    expect(h.names().undo).toEqual(["drag"]);
    const e = h.undo()!;
    expect([e.ops, e.inverse]).toEqual([
      [op("m1-do"), op("m2-do")],
      [op("m2-undo"), op("m1-undo")],
    ]);
  });

  it("cancelling returns the ops back to the mark and records nothing", () => {
    const h = new History();
    h.record(entry("a"));
    h.mark("drag");
    h.record(entry("m1"));
    expect(h.cancel()).toEqual([op("m1-undo")]);
    expect(h.names()).toEqual({ undo: ["a"], redo: [] });
  });

  it("an empty action is not a step", () => {
    const h = new History();
    h.record({ name: "nothing", ops: [], inverse: [] });
    expect(h.canUndo).toBe(false);
  });

  it("forgets an action the server refused", () => {
    const h = new History();
    const a = entry("a");
    h.record(a);
    h.record(entry("b"));
    h.forget(a.ops);
    expect(h.names().undo).toEqual(["b"]);
  });

  it("keeps at most its limit", () => {
    const h = new History(2);
    ["a", "b", "c"].forEach((n) => h.record(entry(n)));
    expect(h.names().undo).toEqual(["b", "c"]);
  });
});
