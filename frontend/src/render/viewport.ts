// The view onto the graph: screen = world × scale + (dx, dy). Pure helpers for pan, zoom and fit.

import type { Point } from "../model/document";

export interface Viewport {
  scale: number;
  dx: number;
  dy: number;
}

export interface Rect {
  x: number;
  y: number;
  w: number;
  h: number;
}

export const MIN_SCALE = 0.05;
export const MAX_SCALE = 3;
/** How far out Fit may go: a graph of thousands of boxes, expanded, fits whole (issue 35). */
export const FIT_MIN_SCALE = 0.002;

const clamp = (s: number) => Math.min(MAX_SCALE, Math.max(MIN_SCALE, s));

export function toScreen(rect: Rect, vp: Viewport): Rect {
  return {
    x: vp.dx + rect.x * vp.scale,
    y: vp.dy + rect.y * vp.scale,
    w: rect.w * vp.scale,
    h: rect.h * vp.scale,
  };
}

export function toWorld(p: Point, vp: Viewport): Point {
  return { x: (p.x - vp.dx) / vp.scale, y: (p.y - vp.dy) / vp.scale };
}

/** The viewport that shows ``bounds`` whole and centred, never enlarged past 1:1 (and further out than zooming goes when that is what fits). */
export function fit(bounds: Rect, width: number, height: number, margin = 32): Viewport {
  if (bounds.w <= 0 || bounds.h <= 0) return { scale: 1, dx: width / 2, dy: height / 2 };
  const scale = Math.max(
    FIT_MIN_SCALE,
    Math.min(1, (width - 2 * margin) / bounds.w, (height - 2 * margin) / bounds.h),
  );
  return {
    scale,
    dx: (width - bounds.w * scale) / 2 - bounds.x * scale,
    dy: (height - bounds.h * scale) / 2 - bounds.y * scale,
  };
}

/** Zoom by ``factor`` keeping the point under ``at`` (screen) where it is. */
export function zoomAt(vp: Viewport, factor: number, at: Point): Viewport {
  // below MIN_SCALE (a Fit of a huge graph) zooming in works and zooming out stays
  const scale =
    vp.scale < MIN_SCALE
      ? Math.min(MAX_SCALE, Math.max(vp.scale, vp.scale * factor))
      : clamp(vp.scale * factor);
  const k = scale / vp.scale;
  return { scale, dx: at.x - (at.x - vp.dx) * k, dy: at.y - (at.y - vp.dy) * k };
}

export function pan(vp: Viewport, dx: number, dy: number): Viewport {
  return { ...vp, dx: vp.dx + dx, dy: vp.dy + dy };
}

/** The smallest rectangle around every rect. */
export function bounds(rects: Iterable<Rect>): Rect {
  let x0 = Infinity;
  let y0 = Infinity;
  let x1 = -Infinity;
  let y1 = -Infinity;
  for (const r of rects) {
    x0 = Math.min(x0, r.x);
    y0 = Math.min(y0, r.y);
    x1 = Math.max(x1, r.x + r.w);
    y1 = Math.max(y1, r.y + r.h);
  }
  return x0 === Infinity ? { x: 0, y: 0, w: 0, h: 0 } : { x: x0, y: y0, w: x1 - x0, h: y1 - y0 };
}

export function intersects(a: Rect, b: Rect): boolean {
  return a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;
}

/** Centre ``rect`` (world) in a ``width`` × ``height`` canvas at the current scale. */
export function centreOn(vp: Viewport, rect: Rect, width: number, height: number): Viewport {
  return {
    scale: vp.scale,
    dx: width / 2 - (rect.x + rect.w / 2) * vp.scale,
    dy: height / 2 - (rect.y + rect.h / 2) * vp.scale,
  };
}

/** The viewport that shows ``rect`` centred: at the current scale, at least 0.6 (where labels read), fitted when it is larger than the view. */
export function showRect(vp: Viewport, rect: Rect, width: number, height: number): Viewport {
  const scale = Math.min(Math.max(vp.scale, 0.6), fit(rect, width, height, 48).scale);
  return centreOn({ ...vp, scale }, rect, width, height);
}
