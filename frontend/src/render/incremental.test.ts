import ELK from "elkjs/lib/elk.bundled.js";
import { beforeEach, describe, expect, it } from "vitest";
import { graphView, OPERATION, TENSOR, type LoomDocument, type LoomNode } from "../model/document";
import { groupLevels, levelStats, withFrames } from "./groupLayout";
import { defaultCollapsed, GROUP, groupedView, groupId, scopeTree } from "./groups";
import {
  BlockCache,
  blockInput,
  changedGroup,
  closedLayout,
  makeRoom,
  openedLayout,
  placedBlock,
} from "./incremental";
import { layoutInput, runLayout } from "./layout";
import { intersects, type Rect } from "./viewport";

const whole = { start: [0], end: [2] };
const tensor = (id: string): LoomNode => ({
  id,
  type: TENSOR,
  label: id,
  body: { dtype: "float32", range: whole },
});
const op = (id: string, ins: string[], outs: string[], scope: string): LoomNode => ({
  id,
  type: OPERATION,
  label: id,
  body: {
    kernel: "op:add",
    inputs: { x: ins.map((tensorId) => ({ tensorId, range: whole })) },
    outputs: { result: outs.map((tensorId) => ({ tensorId, range: whole })) },
  },
  tags: { [GROUP]: { scope } },
});

/** ``layers`` identical layers, each an attention part (a fork and a join) then an MLP part, as an imported stack is. */
function stack(layers: number): LoomDocument {
  const nodes: LoomNode[] = [tensor("x0")];
  for (let i = 0; i < layers; i++) {
    const s = `/layers.${i}`;
    const [x, q, k, a, h, y] = [`x${i}`, `q${i}`, `k${i}`, `a${i}`, `h${i}`, `x${i + 1}`];
    nodes.push(
      tensor(`wq${i}`),
      tensor(`wk${i}`),
      tensor(q),
      tensor(k),
      tensor(a),
      tensor(h),
      tensor(y),
    );
    nodes.push(
      op(`opq${i}`, [x, `wq${i}`], [q], `${s}/attn`),
      op(`opk${i}`, [x, `wk${i}`], [k], `${s}/attn`),
      op(`opa${i}`, [q, k], [a], `${s}/attn`),
    );
    nodes.push(op(`up${i}`, [a], [h], `${s}/mlp`), op(`down${i}`, [h, x], [y], s));
  }
  return { id: "stack", nodes };
}

const elk = new ELK();
const doc = stack(4);
const tree = scopeTree(doc);
const view = graphView(doc);

async function laidOut(collapsed: Set<string>): Promise<Map<string, Rect>> {
  const grouped = groupedView(view, tree, collapsed);
  return withFrames(
    new Map(await runLayout(elk, layoutInput(grouped.view, grouped), groupLevels)),
    grouped,
  );
}

/** What the editor does when ``path`` opens: its block alone in the worker, put where its box was. */
async function opened(
  rects: Map<string, Rect>,
  was: Set<string>,
  path: string,
): Promise<{ rects: Map<string, Rect>; now: Set<string> }> {
  const now = new Set([...was].filter((p) => p !== path));
  const before = groupedView(view, tree, was);
  const after = groupedView(view, tree, now);
  const change = changedGroup(before, was, now)!;
  const { block, frame } = placedBlock(
    new Map(await runLayout(elk, blockInput(layoutInput(after.view, after), path), groupLevels)),
    groupId(path),
    after,
  )!;
  return {
    rects: withFrames(
      openedLayout(rects, change.group, rects.get(groupId(path))!, block, frame),
      after,
    ),
    now,
  };
}

function closed(rects: Map<string, Rect>, was: Set<string>, path: string): Map<string, Rect> {
  const now = new Set([...was, path]);
  const before = groupedView(view, tree, was);
  const change = changedGroup(before, was, now)!;
  return withFrames(
    closedLayout(rects, before, change.group, rects.get(groupId(path))!),
    groupedView(view, tree, now),
  );
}

describe("opening and closing one group", () => {
  beforeEach(() => Object.assign(levelStats, { placed: 0, reused: 0 }));

  it("finds the one drawn group a change opens or closes, with the groups inside it, and nothing else", () => {
    const all = defaultCollapsed(tree, 100);
    const grouped = groupedView(view, tree, all);
    // given everything collapsed, when layer 1 and its attention part open together (a search revealing a node)
    const revealing = new Set([...all].filter((p) => p !== "/layers.1" && p !== "/layers.1/attn"));
    expect(changedGroup(grouped, all, revealing)).toMatchObject({
      group: { path: "/layers.1" },
      opened: true,
    });
    // then one drawn group changed; two drawn groups at once, or a hidden one alone, are not one
    expect(
      changedGroup(
        grouped,
        all,
        new Set([...all].filter((p) => p !== "/layers.1" && p !== "/layers.2")),
      ),
    ).toBeNull();
    expect(
      changedGroup(grouped, all, new Set([...all].filter((p) => p !== "/layers.1/attn"))),
    ).toBeNull();
    expect(changedGroup(groupedView(view, tree, revealing), revealing, all)).toMatchObject({
      group: { path: "/layers.1" },
      opened: false,
    });
  });

  it("lays out only the opened layer, keeps every other box in place or moves it by the group's growth, and overlaps nothing", async () => {
    // given the stack laid out collapsed
    const all = defaultCollapsed(tree, 100);
    const start = await laidOut(all);
    const box = start.get(groupId("/layers.1"))!;
    levelStats.placed = 0;
    levelStats.reused = 0;
    // when layer 1 opens
    const { rects, now } = await opened(start, all, "/layers.1");
    // then only its levels were laid out (the layer's own, its two collapsed parts need none)
    expect(levelStats.placed + levelStats.reused).toBe(1);
    // its frame starts where its box was
    const frame = rects.get(groupId("/layers.1"))!;
    expect([frame.x, frame.y]).toEqual([box.x, box.y]);
    // every other box kept its place, or moved right or down by exactly the frame's growth
    for (const [id, r] of start) {
      if (id === groupId("/layers.1")) continue;
      const next = rects.get(id)!;
      expect([
        [0, 0],
        [frame.w - box.w, 0],
        [0, frame.h - box.h],
      ]).toContainEqual([next.x - r.x, next.y - r.y]);
    }
    // and no box outside the layer lies over its frame
    const inside = new Set(
      [...groupedView(view, tree, now).parentOf]
        .filter(([, g]) => g === groupId("/layers.1"))
        .map(([id]) => id),
    );
    for (const [id, r] of rects)
      if (id !== groupId("/layers.1") && !inside.has(id))
        expect(intersects(r, frame), id).toBe(false);
    // when it closes again, then every box is back exactly where it was, with no layout at all
    levelStats.placed = 0;
    expect(closed(rects, now, "/layers.1")).toEqual(start);
    expect(levelStats.placed).toBe(0);
  });
});

describe("opening a group shaped like one opened before", () => {
  it("takes the places ELK gave that group's block, as ELK places its own, and nothing for another shape", async () => {
    const all = defaultCollapsed(tree, 100);
    const opening = (path: string) => {
      const after = groupedView(view, tree, new Set([...all].filter((p) => p !== path)));
      return { after, input: blockInput(layoutInput(after.view, after), path) };
    };
    const laid = async (path: string) => {
      const { after, input } = opening(path);
      return placedBlock(new Map(await runLayout(elk, input, groupLevels)), groupId(path), after)!;
    };
    // given layer 1's block laid out and kept
    const cache = new BlockCache();
    expect(cache.get(opening("/layers.1").input)).toBeNull();
    cache.set(opening("/layers.1").input, await laid("/layers.1"));
    // then layer 2 (the same shape, other ids) opens with exactly ELK's places for it
    expect(cache.get(opening("/layers.2").input)).toEqual(await laid("/layers.2"));
    // and layer 0, which also holds the graph's input, is another shape
    expect(cache.get(opening("/layers.0").input)).toBeNull();
  });
});

describe("laying out levels of the same shape once", () => {
  beforeEach(() => Object.assign(levelStats, { placed: 0, reused: 0 }));

  it("places every layer of an expanded stack as ELK places the first, laying out one layer's levels once", async () => {
    // given a stack of 4 identical layers, expanded (each layer: its own level, attn's, mlp's)
    const rects = await laidOut(new Set());
    // then ELK laid out the top, layer 0 (which also holds the graph's input x0), one other
    // layer and the two parts once; the other layers and parts reused them
    expect(levelStats).toEqual({ placed: 5, reused: 8 });
    // and each layer's boxes sit in its frame exactly as layer 1's sit in its own
    const relative = (i: number) =>
      ["opq", "opk", "opa", "up", "down", "q", "k", "a", "h"].map((name) => {
        const r = rects.get(`${name}${i}`)!;
        const f = rects.get(groupId(`/layers.${i}`))!;
        return [r.x - f.x, r.y - f.y, r.w, r.h].map((v) => Math.round(v * 1000) / 1000);
      });
    for (const i of [2, 3]) expect(relative(i)).toEqual(relative(1));
  });

  it("moves nothing but what lies right of or below a group when it makes room", () => {
    const rects = new Map<string, Rect>([
      ["left", { x: 0, y: 0, w: 50, h: 20 }],
      ["right", { x: 300, y: 500, w: 50, h: 20 }],
      ["below", { x: 120, y: 200, w: 50, h: 20 }],
      ["above", { x: 120, y: 0, w: 50, h: 20 }],
      ["gone", { x: 120, y: 100, w: 10, h: 10 }],
    ]);
    const room = makeRoom(
      rects,
      { x: 100, y: 100, w: 100, h: 50 },
      { w: 300, h: 150 },
      (id) => id !== "gone",
    );
    expect(Object.fromEntries([...room].map(([id, r]) => [id, [r.x, r.y]]))).toEqual({
      left: [0, 0],
      right: [500, 500],
      below: [120, 300],
      above: [120, 0],
    });
  });
});
