// Where new nodes go, and how the view follows them: placement heuristics over the drawn boxes
// (graph coordinates) and the viewport. Pure functions; the editor applies what they return.

import type { Clip } from "../model/clipboard";
import { LAYOUT, type Point } from "../model/document";
import {
  bounds,
  centreOn,
  fit,
  intersects,
  toScreen,
  toWorld,
  type Rect,
  type Viewport,
} from "./viewport";

export interface Size {
  width: number;
  height: number;
}

/** ``p``, moved down until a new node there (about 200 x 80) overlaps no drawn box (40 tries at most). */
export function clearSpot(rects: Iterable<Rect>, p: Point): Point {
  const drawn = [...rects];
  const at = { ...p };
  for (let i = 0; i < 40; i++) {
    const probe = { x: at.x - 10, y: at.y - 10, w: 200, h: 80 };
    if (!drawn.some((r) => intersects(r, probe))) break;
    at.y += 90;
  }
  return at;
}

/** Right of the given boxes (a new operation beside its inputs), clear of others; null when none is drawn. */
export function spotRightOf(rects: ReadonlyMap<string, Rect>, ids: string[]): Point | null {
  const of = ids.map((id) => rects.get(id)).filter((r): r is Rect => !!r);
  if (!of.length) return null;
  const b = bounds(of);
  return clearSpot(rects.values(), { x: b.x + b.w + 70, y: b.y + b.h / 2 - 23 });
}

/** The middle of the view, clear of other boxes. */
export function freeSpot(rects: ReadonlyMap<string, Rect>, vp: Viewport, size: Size): Point {
  const c = toWorld({ x: size.width / 2, y: size.height / 2 }, vp);
  return clearSpot(rects.values(), { x: c.x - 80, y: c.y - 30 });
}

/**
 * The viewport that brings the boxes ``ids`` into view (nodes the user just made): everything
 * fitted when that stays readable, else centred on the first one out of view; null when all are
 * in view already.
 */
export function revealing(
  rects: ReadonlyMap<string, Rect>,
  ids: string[],
  vp: Viewport,
  size: Size,
): Viewport | null {
  const out = ids
    .map((id) => rects.get(id))
    .filter((r): r is Rect => !!r)
    .filter((r) => {
      const s = toScreen(r, vp);
      return s.x < 0 || s.y < 0 || s.x + s.w > size.width || s.y + s.h > size.height;
    });
  if (!out.length) return null;
  const all = fit(bounds(rects.values()), size.width, size.height);
  return all.scale >= 0.55 ? all : centreOn(vp, out[0]!, size.width, size.height);
}

/** Copies without a Layout tag get one where the original is drawn (paste then offsets them). */
export function pinnedClip(clip: Clip, rects: ReadonlyMap<string, Rect>): Clip {
  return {
    nodes: clip.nodes.map((n) => {
      const r = rects.get(n.id);
      return r && !n.tags?.[LAYOUT]
        ? { ...n, tags: { ...(n.tags ?? {}), [LAYOUT]: { x: r.x, y: r.y } } }
        : n;
    }),
  };
}
