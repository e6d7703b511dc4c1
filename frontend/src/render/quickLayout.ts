// A provisional layout of one level, on the page's thread in well under a millisecond, shown
// while ELK lays the level out in the worker (ELK takes 200-500 ms for even 17 boxes on a
// loaded machine). Like ELK's layered layout it runs left to right: each box in the layer after
// its latest input, a layer's boxes stacked in the order of their inputs, and layers cut into
// rows when the level is too wide (``wrappedPath``, the same rule as a path). A level that is
// one path is placed exactly as the worker places it, so only branching levels change when
// ELK's answer arrives.

import { pathOrder, type Item } from "./chainLayout";
import { levelPadding, NODE_GAP, wrappedPath } from "./layout";
import type { Rect } from "./viewport";

/**
 * Each item's layer (``outputs``: each item's outputs by index): one past the latest of its
 * inputs. A depth-first walk from the items in the order listed drops each edge that closes a
 * cycle, as it finds it; the rest is taken in topological order.
 */
function layers(outputs: readonly number[][]): number[] {
  const state = outputs.map(() => 0); // 0: not seen, 1: on the walk, 2: done
  const order: number[] = [];
  const kept: number[][] = outputs.map(() => []);
  for (let root = 0; root < outputs.length; root++) {
    if (state[root]) continue;
    state[root] = 1;
    const stack: [number, number][] = [[root, 0]];
    while (stack.length) {
      const top = stack.at(-1)!;
      const next = outputs[top[0]]![top[1]++];
      if (next === undefined) {
        state[top[0]] = 2;
        order.push(top[0]);
        stack.pop();
      } else if (state[next] !== 1) {
        kept[top[0]]!.push(next);
        if (!state[next]) {
          state[next] = 1;
          stack.push([next, 0]);
        }
      }
    }
  }
  const layer = outputs.map(() => 0);
  for (const i of order.reverse())
    for (const j of kept[i]!) layer[j] = Math.max(layer[j]!, layer[i]! + 1);
  return layer;
}

/** ``items`` and ``edges`` placed in layers without ELK; rects relative to the level and its size, ``padding`` included. */
export function quickLevel(
  items: readonly Item[],
  edges: readonly { from: string; to: string }[],
  padding?: string,
): { w: number; h: number; rects: [string, Rect][] } {
  const pad = levelPadding(padding);
  const path = pathOrder(items, edges);
  if (path) return wrappedPath(path, pad);
  const index = new Map(items.map((b, i) => [b.id, i]));
  const inputs: number[][] = items.map(() => []);
  const outputs: number[][] = items.map(() => []);
  for (const e of edges) {
    const a = index.get(e.from);
    const b = index.get(e.to);
    if (a === undefined || b === undefined || a === b) continue;
    inputs[b]!.push(a);
    outputs[a]!.push(b);
  }
  const columns: number[][] = [];
  layers(outputs).forEach((l, i) => (columns[l] ??= []).push(i));
  // a layer's boxes in the order of their inputs' places in the layers before (ties: as listed)
  const rank = new Map<number, number>();
  const order = (i: number): number => {
    const seen = inputs[i]!.flatMap((a) => (rank.has(a) ? [rank.get(a)!] : []));
    return seen.length ? seen.reduce((s, r) => s + r, 0) / seen.length : 0;
  };
  const stacks = columns.map((column, l) => {
    const sorted = column
      .map((i) => ({ i, at: order(i) }))
      .sort((p, q) => p.at - q.at || p.i - q.i)
      .map((p) => p.i);
    sorted.forEach((i, r) => rank.set(i, r));
    const w = Math.max(...sorted.map((i) => items[i]!.w));
    const h = sorted.reduce((s, i) => s + items[i]!.h, 0) + NODE_GAP * (sorted.length - 1);
    return { id: String(l), w, h, members: sorted };
  });
  const placedStacks = wrappedPath(stacks, pad);
  const placed = new Map(placedStacks.rects);
  const rects: [string, Rect][] = [];
  for (const s of stacks) {
    const at = placed.get(s.id)!;
    let y = at.y;
    for (const i of s.members) {
      const b = items[i]!;
      rects.push([b.id, { x: at.x + (s.w - b.w) / 2, y, w: b.w, h: b.h }]);
      y += b.h + NODE_GAP;
    }
  }
  return { w: placedStacks.w, h: placedStacks.h, rects };
}
