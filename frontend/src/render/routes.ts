// Routes of edges that run backwards (target left of source), as in a long chain that the layout
// wrapped into rows: out of the source to the right, along a free horizontal band between the
// two boxes, and into the target from the left.

import type { Rect } from "./viewport";

/** How far a back edge runs out of its source and into its target before it turns. */
export const BACK_STUB = 18;

/** Whether the edge from ``a``'s right side to ``b``'s left side runs backwards. */
export function isBackEdge(a: Rect, b: Rect): boolean {
  return b.x < a.x + a.w + 2 * BACK_STUB;
}

/**
 * The y of the horizontal run of a back edge from ``a`` to ``b``: the middle of the widest band
 * between the two boxes that no other box crossing the run's x-extent occupies; below both boxes
 * when they overlap vertically, or when no band is free (then the run passes behind boxes).
 */
export function backEdgeRunY(a: Rect, b: Rect, boxes: Iterable<Rect>): number {
  const upper = a.y <= b.y ? a : b;
  const lower = upper === a ? b : a;
  const top = upper.y + upper.h;
  const bottom = lower.y;
  if (bottom <= top) return Math.max(a.y + a.h, b.y + b.h) + BACK_STUB;
  const left = b.x - BACK_STUB;
  const right = a.x + a.w + BACK_STUB;
  const taken: [number, number][] = [];
  for (const r of boxes) {
    if (r === a || r === b || r.x > right || r.x + r.w < left || r.y >= bottom || r.y + r.h <= top)
      continue;
    taken.push([Math.max(r.y, top), Math.min(r.y + r.h, bottom)]);
  }
  taken.sort((p, q) => p[0] - q[0]);
  let best: [number, number] | null = null;
  let from = top;
  for (const [start, end] of [...taken, [bottom, bottom] as [number, number]]) {
    if (start > from && (!best || start - from > best[1] - best[0])) best = [from, start];
    from = Math.max(from, end);
  }
  return best ? (best[0] + best[1]) / 2 : (top + bottom) / 2;
}
