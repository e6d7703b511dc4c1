// Drawing groups (render/groups.ts) on the canvas, TensorBoard style: an expanded group is a
// labelled rounded frame behind its members, with a chevron to collapse it; a collapsed group is
// one box ("self_attn · 14 ops") over a second outline, so it reads as a stack. A collapsed
// group that holds a search hit, a selected node or a node with issues is marked like a node.
// Like canvas.ts, this only reads the scene.

import type { Point } from "../model/document";
import { FRAME_TOP } from "./groupLayout";
import type { GroupedEdge, GroupShape } from "./groups";
import type { Layout } from "./layout";
import { intersects, type Rect, type Viewport } from "./viewport";

export const GROUP_COLORS = {
  frameFill: "rgba(91, 107, 191, 0.07)",
  frameStroke: "#8f9bcf",
  boxFill: "#eceffc",
  boxStroke: "#5b6bbf",
  label: "#3a4578",
  count: "#5b6677",
} as const;

/** What the scene knows of groups (absent for a graph without any). */
export interface SceneGroups {
  shapes: readonly GroupShape[];
  /** Collapsed groups (ids) holding a search hit, a selected node, a node with issues. */
  found: ReadonlySet<string>;
  selected: ReadonlySet<string>;
  issues: ReadonlySet<string>;
  /** The group selected by a click on it (Enter toggles it). */
  focus: string | null;
  /** Edges that bundle several into or out of a collapsed group. */
  bundled: readonly GroupedEdge[];
}

/** The chevron's square at a frame's or a box's top left (graph units). */
const CHEVRON = 26;

function chevron(ctx: CanvasPath, x: number, y: number, open: boolean): void {
  // a small triangle: pointing down when expanded, right when collapsed
  if (open) {
    ctx.moveTo(x - 5, y - 3);
    ctx.lineTo(x + 5, y - 3);
    ctx.lineTo(x, y + 4);
  } else {
    ctx.moveTo(x - 3, y - 5);
    ctx.lineTo(x + 4, y);
    ctx.lineTo(x - 3, y + 5);
  }
  ctx.closePath();
}

/** ``text`` in at most ``width`` screen pixels: cut with an ellipsis, or nothing when too narrow. */
function fitted(ctx: CanvasRenderingContext2D, text: string, width: number): string {
  if (width < 24) return "";
  if (ctx.measureText(text).width <= width) return text;
  let n = text.length;
  while (n > 1 && ctx.measureText(`${text.slice(0, n)}…`).width > width) n = Math.floor(n * 0.85);
  return n > 1 ? `${text.slice(0, n)}…` : "";
}

/** Frames of expanded groups, outer first, under the edges and boxes. */
export function drawFrames(
  ctx: CanvasRenderingContext2D,
  groups: SceneGroups,
  layout: Layout,
  seen: Rect,
  vp: Viewport,
  ratio: number,
): void {
  const frames = groups.shapes.filter((g) => !g.collapsed);
  if (!frames.length) return;
  const labelled = vp.scale >= 0.08;
  ctx.lineWidth = 1.25 / Math.max(vp.scale, 0.5);
  const heads = new Path2D();
  const labels: [string, Rect][] = [];
  for (const g of frames) {
    const r = layout.rects.get(g.id);
    if (!r || !intersects(r, seen)) continue;
    ctx.beginPath();
    ctx.roundRect(r.x, r.y, r.w, r.h, 12);
    ctx.fillStyle = GROUP_COLORS.frameFill;
    ctx.fill();
    ctx.strokeStyle = g.id === groups.focus ? "#0b57d0" : GROUP_COLORS.frameStroke;
    ctx.stroke();
    chevron(heads, r.x + CHEVRON / 2 + 2, r.y + FRAME_TOP / 2, true);
    if (labelled) labels.push([g.name, r]);
  }
  ctx.fillStyle = GROUP_COLORS.label;
  ctx.fill(heads);
  if (!labels.length) return;
  // the scope's name in the header, in a fixed screen size when zoomed out
  ctx.textAlign = "left";
  ctx.textBaseline = "middle";
  if (vp.scale >= 0.45) {
    ctx.font = "600 13px system-ui, sans-serif";
    for (const [name, r] of labels)
      ctx.fillText(name, r.x + CHEVRON + 4, r.y + FRAME_TOP / 2, r.w - CHEVRON - 12);
    return;
  }
  ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
  ctx.font = "600 11px system-ui, sans-serif";
  for (const [name, r] of labels)
    ctx.fillText(
      fitted(ctx, name, (r.w - CHEVRON - 12) * vp.scale),
      vp.dx + (r.x + CHEVRON + 4) * vp.scale,
      vp.dy + (r.y + FRAME_TOP / 2) * vp.scale,
    );
  ctx.setTransform(vp.scale * ratio, 0, 0, vp.scale * ratio, vp.dx * ratio, vp.dy * ratio);
}

/** Bundled edges drawn again, thicker (over the plain ones, under the boxes). */
export function drawBundled(
  ctx: CanvasRenderingContext2D,
  groups: SceneGroups,
  layout: Layout,
  vp: Viewport,
  path: (e: GroupedEdge, a: Rect, b: Rect) => void,
): void {
  if (!groups.bundled.length) return;
  ctx.beginPath();
  for (const e of groups.bundled) {
    const a = layout.rects.get(e.from);
    const b = layout.rects.get(e.to);
    if (a && b) path(e, a, b);
  }
  ctx.lineWidth = 3.5 / Math.max(vp.scale, 0.5);
  ctx.strokeStyle = GROUP_COLORS.frameStroke;
  ctx.stroke();
}

/** Collapsed groups as boxes: a stack outline, the chevron, "self_attn · 14 ops", and their marks. */
export function drawCollapsed(
  ctx: CanvasRenderingContext2D,
  groups: SceneGroups,
  layout: Layout,
  seen: Rect,
  vp: Viewport,
  ratio: number,
): void {
  const boxes: [GroupShape, Rect][] = [];
  for (const g of groups.shapes) {
    const r = g.collapsed ? layout.rects.get(g.id) : undefined;
    if (r && intersects(r, seen)) boxes.push([g, r]);
  }
  if (!boxes.length) return;
  const line = 1.5 / Math.max(vp.scale, 0.5);
  const behind = new Path2D();
  const front = new Path2D();
  const heads = new Path2D();
  for (const [, r] of boxes) {
    behind.roundRect(r.x + 5, r.y + 5, r.w, r.h, 12);
    front.roundRect(r.x, r.y, r.w, r.h, 12);
    chevron(heads, r.x + CHEVRON / 2 + 4, r.y + r.h / 2, false);
  }
  ctx.lineWidth = line;
  ctx.fillStyle = GROUP_COLORS.boxFill;
  ctx.strokeStyle = GROUP_COLORS.boxStroke;
  ctx.fill(behind);
  ctx.stroke(behind);
  ctx.fill(front);
  ctx.stroke(front);
  ctx.fillStyle = GROUP_COLORS.boxStroke;
  ctx.fill(heads);
  for (const [g, r] of boxes) {
    const marks: [boolean, string, number, number[]][] = [
      [groups.issues.has(g.id), "#d92d20", 2.5, []],
      [groups.found.has(g.id), "#f5b700", 4, []],
      [groups.selected.has(g.id) || groups.focus === g.id, "#0b57d0", 2.5, [6, 3]],
    ];
    let ring = 3;
    for (const [on, colour, width, dash] of marks) {
      if (!on) continue;
      ctx.lineWidth = width;
      ctx.strokeStyle = colour;
      ctx.setLineDash(dash);
      ctx.beginPath();
      ctx.roundRect(r.x - ring, r.y - ring, r.w + 2 * ring + 5, r.h + 2 * ring + 5, 14);
      ctx.stroke();
      ring += 4;
    }
    ctx.setLineDash([]);
  }
  ctx.textAlign = "left";
  ctx.textBaseline = "middle";
  ctx.fillStyle = GROUP_COLORS.label;
  if (vp.scale >= 0.45) {
    ctx.font = "600 14px system-ui, sans-serif";
    for (const [g, r] of boxes)
      ctx.fillText(g.title, r.x + CHEVRON + 8, r.y + r.h / 2, r.w - CHEVRON - 16);
    return;
  }
  if (vp.scale < 0.1) return;
  ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
  ctx.font = "600 11px system-ui, sans-serif";
  for (const [g, r] of boxes) {
    // the whole title, else the scope's name alone, else as much of it as fits
    const room = (r.w - CHEVRON - 16) * vp.scale;
    const text = ctx.measureText(g.title).width <= room ? g.title : fitted(ctx, g.name, room);
    ctx.fillText(text, vp.dx + (r.x + CHEVRON + 8) * vp.scale, vp.dy + (r.y + r.h / 2) * vp.scale);
  }
  ctx.setTransform(vp.scale * ratio, 0, 0, vp.scale * ratio, vp.dx * ratio, vp.dy * ratio);
}

/** The group under a world point: a collapsed box, or an expanded frame's header; ``chevron`` when on its chevron. */
export function hitGroup(
  shapes: readonly GroupShape[],
  layout: Layout,
  p: Point,
): { id: string; path: string; zone: "chevron" | "body" } | null {
  for (let i = shapes.length - 1; i >= 0; i--) {
    const g = shapes[i]!;
    const r = layout.rects.get(g.id);
    if (!r || p.x < r.x || p.x > r.x + r.w || p.y < r.y) continue;
    const bottom = g.collapsed ? r.y + r.h : r.y + FRAME_TOP;
    if (p.y > bottom) continue;
    return { id: g.id, path: g.path, zone: p.x <= r.x + CHEVRON + 6 ? "chevron" : "body" };
  }
  return null;
}
