import ELK from "elkjs/lib/elk.bundled.js";
import { describe, expect, it } from "vitest";
import { graphView, OPERATION, TENSOR, type LoomDocument, type LoomNode } from "../model/document";
import { groupLevels, withFrames } from "./groupLayout";
import {
  boundary,
  commonScope,
  defaultCollapsed,
  GROUP,
  groupedView,
  revealing,
  scopePath,
  scopeTree,
} from "./groups";
import { groupBoxSize, layoutInput, runLayout } from "./layout";
import type { Rect } from "./viewport";

const whole = { start: [0], end: [2] };
const tensor = (id: string): LoomNode => ({
  id,
  type: TENSOR,
  label: id,
  body: { dtype: "float32", range: whole },
});
const op = (id: string, ins: string[], outs: string[], scope?: string): LoomNode => ({
  id,
  type: OPERATION,
  label: id,
  body: {
    kernel: "op:add",
    inputs: { x: ins.map((tensorId) => ({ tensorId, range: whole })) },
    outputs: { result: outs.map((tensorId) => ({ tensorId, range: whole })) },
  },
  tags: scope ? { [GROUP]: { scope } } : {},
});

/**
 * x, w -> op1 (/a/p) -> t1 -> op2b (/a/q) -> t6 -> op2 (/a/q, also reads t1) -> t2 -> cast
 * (untagged) -> t3 -> op3 (/b) -> y; w2 -> scale (untagged) -> t5 -> op1.
 */
const doc: LoomDocument = {
  id: "g",
  nodes: [
    tensor("x"),
    tensor("w"),
    tensor("w2"),
    tensor("t5"),
    tensor("t1"),
    tensor("t6"),
    tensor("t2"),
    tensor("t3"),
    tensor("y"),
    op("scale", ["w2"], ["t5"]),
    op("op1", ["x", "w", "t5"], ["t1"], "/a/p"),
    op("op2b", ["t1"], ["t6"], "a/q/"),
    op("op2", ["t1", "t6"], ["t2"], "/a/q"),
    op("cast", ["t2"], ["t3"]),
    op("op3", ["t3"], ["y"], "/b"),
  ],
};
const tree = scopeTree(doc);
const view = graphView(doc);

describe("scopeTree", () => {
  it("nests scopes by path, in document order, counting operations with their sub-groups'", () => {
    expect(tree.roots).toEqual(["/a", "/b"]);
    expect(tree.groups.get("/a")!.children).toEqual(["/a/p", "/a/q"]);
    const summary = [...tree.groups.values()].map((g) => [
      g.path,
      g.name,
      g.parent,
      g.depth,
      g.ops,
    ]);
    expect(summary).toEqual([
      ["/a", "a", null, 1, 4],
      ["/a/p", "p", "/a", 2, 2],
      ["/a/q", "q", "/a", 2, 2],
      ["/b", "b", null, 1, 1],
    ]);
  });

  it.each([
    ["a tagged operation: its scope", "op1", "/a/p"],
    ["a scope written without its slashes is the same scope", "op2b", "/a/q"],
    ["an untagged operation: its grouped neighbours' scope", "scale", "/a/p"],
    ["an untagged operation between two groups: the top", "cast", undefined],
    ["a graph input read inside one group: in it", "x", "/a/p"],
    ["a weight read by an untagged operation of a group: in it", "w2", "/a/p"],
    ["a tensor written and read inside one group: in it", "t6", "/a/q"],
    ["a tensor one group writes and a sibling reads: their parent", "t1", "/a"],
    ["a tensor one group writes and the top reads: the top", "t2", undefined],
    ["a graph output (nothing reads it): the top", "y", undefined],
  ])("%s", (_label, id, path) => {
    expect(tree.of.get(id)).toBe(path);
  });

  it("reads scopes as paths and finds the innermost common one", () => {
    expect([scopePath("/layers.0//attn/"), scopePath(""), scopePath(3)]).toEqual([
      "/layers.0/attn",
      null,
      null,
    ]);
    expect([
      commonScope("/a/p", "/a/q"),
      commonScope("/a", "/a/q"),
      commonScope("/a", "/b"),
      commonScope("/a", null),
    ]).toEqual(["/a", "/a", null, null]);
  });

  it("gives a document without Group tags no groups", () => {
    const flat = scopeTree({ id: "f", nodes: [tensor("x"), op("o", ["x"], ["y"]), tensor("y")] });
    expect([flat.groups.size, flat.of.size]).toEqual([0, 0]);
  });
});

describe("defaultCollapsed", () => {
  it("keeps a small graph expanded and collapses every group of a large one", () => {
    expect(defaultCollapsed(tree, 60)).toEqual(new Set());
    expect(defaultCollapsed(tree, 61)).toEqual(new Set(["/a", "/a/p", "/a/q", "/b"]));
  });

  it("opens a single top-level scope down to the first level with more than one group", () => {
    const under = scopeTree({
      id: "m",
      nodes: doc.nodes.map((n) =>
        n.tags?.[GROUP]
          ? {
              ...n,
              tags: { [GROUP]: { scope: `/m/${(n.tags[GROUP] as { scope: string }).scope}` } },
            }
          : n,
      ),
    });
    expect(defaultCollapsed(under, 100)).toEqual(new Set(["/m/a", "/m/a/p", "/m/a/q", "/m/b"]));
  });
});

describe("groupedView", () => {
  it("draws a collapsed group as one box joined to the tensors outside it", () => {
    const g = groupedView(view, tree, new Set(["/a"]));
    expect(g.view.boxes.map((b) => b.id)).toEqual(["t2", "t3", "y", "cast", "op3"]);
    expect(g.view.edges.map((e) => `${e.from}->${e.to}`)).toEqual([
      "group:/a->t2",
      "t2->cast",
      "cast->t3",
      "t3->op3",
      "op3->y",
    ]);
    expect(g.groups.map((s) => [s.id, s.collapsed, s.title, s.parent])).toEqual([
      ["group:/a", true, "a · 4 ops", null],
      ["group:/b", false, "b · 1 op", null],
    ]);
    expect([
      g.parentOf.get("op3"),
      g.parentOf.get("t2"),
      g.hiddenIn.get("op1"),
      g.hiddenIn.get("t1"),
    ]).toEqual(["group:/b", undefined, "group:/a", "group:/a"]);
  });

  it("bundles the edges from one tensor into a collapsed group into one, counted", () => {
    const g = groupedView(view, tree, new Set(["/a/q"]));
    const into = g.view.edges.filter((e) => e.to === "group:/a/q").map((e) => [e.from, e.count]);
    expect(into).toEqual([["t1", 2]]);
    expect(g.groups.map((s) => [s.id, s.collapsed, s.parent])).toEqual([
      ["group:/a", false, null],
      ["group:/a/p", false, "group:/a"],
      ["group:/a/q", true, "group:/a"],
      ["group:/b", false, null],
    ]);
  });

  it("hides a collapsed group inside a collapsed one in the outer one", () => {
    const g = groupedView(view, tree, new Set(["/a", "/a/p"]));
    expect([g.groups.map((s) => s.id), g.hiddenIn.get("op1")]).toEqual([
      ["group:/a", "group:/b"],
      "group:/a",
    ]);
  });

  it("draws everything when nothing is collapsed", () => {
    const g = groupedView(view, tree, new Set());
    expect([g.view.boxes.length, g.view.edges.length]).toEqual([
      view.boxes.length,
      view.edges.length,
    ]);
  });
});

describe("boundary and revealing", () => {
  it("names the tensors a group reads and writes outside it", () => {
    expect(boundary(tree, view, "/a/q")).toEqual({ inputs: ["t1"], outputs: ["t2"] });
    expect(boundary(tree, view, "/a")).toEqual({ inputs: [], outputs: ["t2"] });
    expect(boundary(tree, view, "/b")).toEqual({ inputs: ["t3"], outputs: ["y"] });
  });

  it("expands every group around a node, and only those", () => {
    expect(revealing(tree, "op1", new Set(["/a", "/a/p", "/a/q", "/b"]))).toEqual(
      new Set(["/a/q", "/b"]),
    );
    expect(revealing(tree, "group:/a/q", new Set(["/a", "/a/q"]))).toEqual(new Set(["/a/q"]));
    expect(revealing(tree, "y", new Set(["/a"]))).toEqual(new Set(["/a"]));
  });
});

describe("grouped layout", () => {
  const laidOut = async (collapsed: Set<string>) => {
    const g = groupedView(view, tree, collapsed);
    const input = layoutInput(g.view, g);
    return { g, rects: withFrames(new Map(await runLayout(new ELK(), input, groupLevels)), g) };
  };
  const inside = (r: Rect, frame: Rect) =>
    r.x >= frame.x &&
    r.y >= frame.y &&
    r.x + r.w <= frame.x + frame.w &&
    r.y + r.h <= frame.y + frame.h;
  const apart = (a: Rect, b: Rect) =>
    a.x + a.w <= b.x || b.x + b.w <= a.x || a.y + a.h <= b.y || b.y + b.h <= a.y;

  it("lays each expanded group out as a block inside its parent's frame, apart from the others", async () => {
    const { rects } = await laidOut(new Set());
    const r = (id: string) => rects.get(id)!;
    expect(
      ["op1", "x", "w", "w2", "scale", "t5"].every((id) => inside(r(id), r("group:/a/p"))),
    ).toBe(true);
    expect(["op2", "op2b", "t6"].every((id) => inside(r(id), r("group:/a/q")))).toBe(true);
    expect([
      inside(r("group:/a/p"), r("group:/a")),
      inside(r("group:/a/q"), r("group:/a")),
      inside(r("t1"), r("group:/a")),
    ]).toEqual([true, true, true]);
    expect([
      apart(r("group:/a"), r("group:/b")),
      apart(r("group:/a/p"), r("group:/a/q")),
      apart(r("t2"), r("group:/a")),
    ]).toEqual([true, true, true]);
    // the data flow runs through the blocks in reading order (left to right, then the next row)
    const before = (a: Rect, b: Rect) => a.x + a.w <= b.x || a.y + a.h <= b.y;
    expect(
      ["group:/a", "t2", "cast", "t3", "group:/b", "y"].every(
        (id, i, ids) => i === 0 || before(r(ids[i - 1]!), r(id)),
      ),
    ).toBe(true);
  });

  it("places a collapsed group as one box of its title's size, in the flow", async () => {
    const { rects } = await laidOut(new Set(["/a"]));
    const box = rects.get("group:/a")!;
    expect({ w: box.w, h: box.h }).toEqual(groupBoxSize("a · 4 ops"));
    expect(box.x + box.w <= rects.get("t2")!.x).toBe(true);
    expect([rects.has("op1"), rects.has("group:/a/p")]).toEqual([false, false]);
  });
});
