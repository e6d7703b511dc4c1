// A level that is one simple path (a collapsed stack of layers: layer, tensor, layer, tensor...)
// is placed directly, in the layout worker like ELK: left to right, and cut into rows that read
// left to right, top to bottom when too wide, as ELK's wrapping would, with the gap between rows
// free for the back edges (render/routes.ts). ELK spends tens of milliseconds on any graph, even
// a path of twenty nodes; this takes microseconds, so a collapsed import paints at once.

import type { Rect } from "./viewport";

export interface Item {
  id: string;
  w: number;
  h: number;
}

/** The padding of a level (ELK's "[top=..,left=..,bottom=..,right=..]"). */
export interface Padding {
  top: number;
  left: number;
  bottom: number;
  right: number;
}

export const LAYER_GAP = 60;
export const ROW_GAP = 60;

/** The items in path order when they and ``edges`` form one simple path (or one item); else null. */
export function pathOrder(
  items: readonly Item[],
  edges: readonly { from: string; to: string }[],
): Item[] | null {
  if (!items.length) return null;
  const byId = new Map(items.map((b) => [b.id, b]));
  const next = new Map<string, string>();
  const into = new Set<string>();
  for (const e of edges) {
    if (!byId.has(e.from) || !byId.has(e.to) || e.from === e.to) continue;
    if (next.get(e.from) === e.to) continue;
    if (next.has(e.from) || into.has(e.to)) return null;
    next.set(e.from, e.to);
    into.add(e.to);
  }
  if (next.size !== items.length - 1) return null;
  const start = items.find((b) => !into.has(b.id));
  const order: Item[] = [];
  for (
    let at: string | undefined = start?.id;
    at !== undefined && order.length <= items.length;
    at = next.get(at)
  )
    order.push(byId.get(at)!);
  return order.length === items.length ? order : null;
}

/** The path in rows of at most ``limit`` wide (one row: Infinity); rects and the size with padding. */
export function placePath(
  order: readonly Item[],
  pad: Padding,
  limit = Infinity,
): { w: number; h: number; rects: [string, Rect][] } {
  const rows: Item[][] = [[]];
  let x = 0;
  for (const b of order) {
    const row = rows.at(-1)!;
    if (row.length && x + b.w > limit) {
      rows.push([b]);
      x = b.w + LAYER_GAP;
    } else {
      row.push(b);
      x += b.w + LAYER_GAP;
    }
  }
  const rects: [string, Rect][] = [];
  let y = pad.top;
  let width = 0;
  for (const row of rows) {
    const height = Math.max(...row.map((b) => b.h));
    let at = pad.left;
    for (const b of row) {
      rects.push([b.id, { x: at, y: y + (height - b.h) / 2, w: b.w, h: b.h }]);
      at += b.w + LAYER_GAP;
    }
    width = Math.max(width, at - LAYER_GAP);
    y += height + ROW_GAP;
  }
  return { w: width + pad.right, h: y - ROW_GAP + pad.bottom, rects };
}
