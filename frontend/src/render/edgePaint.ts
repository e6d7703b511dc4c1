// Drawing edges: an edge's path (a curve ahead, a routed run behind: render/routes.ts), its arrow
// head, the back-edge runs found once per layout, and the edges carrying collectives under the
// current plan, thicker with their bytes and labelled in pills over everything else.

import { dragOffset } from "../tools/tools";
import { COLORS } from "./colors";
import type { Layout } from "./layout";
import { BACK_STUB, backEdgeRunY, isBackEdge } from "./routes";
import { rectOf, type Scene } from "./scene";
import { intersects, type Rect } from "./viewport";

/**
 * An edge from ``a``'s right side to ``b``'s left side: a curve when ``b`` lies ahead; when it lies
 * behind, the route of ``render/routes.ts`` with its horizontal run at ``runY``.
 */
export function edgePath(
  ctx: CanvasRenderingContext2D,
  a: Rect,
  b: Rect,
  detailed: boolean,
  runY?: number,
): void {
  const x0 = a.x + a.w;
  const y0 = a.y + a.h / 2;
  const x1 = b.x;
  const y1 = b.y + b.h / 2;
  ctx.moveTo(x0, y0);
  if (runY !== undefined) {
    const points: [number, number][] = [
      [x0 + BACK_STUB, y0],
      [x0 + BACK_STUB, runY],
      [x1 - BACK_STUB, runY],
      [x1 - BACK_STUB, y1],
      [x1, y1],
    ];
    const radius = detailed ? Math.min(10, Math.abs(runY - y0) / 2, Math.abs(y1 - runY) / 2) : 0;
    for (let i = 0; i < points.length - 1; i++) {
      const [px, py] = points[i]!;
      const [nx, ny] = points[i + 1]!;
      if (radius > 0) ctx.arcTo(px, py, nx, ny, radius);
      else ctx.lineTo(px, py);
    }
    ctx.lineTo(x1, y1);
    return;
  }
  if (detailed) {
    const c = Math.max(30, Math.abs(x1 - x0) / 2);
    ctx.bezierCurveTo(x0 + c, y0, x1 - c, y1, x1, y1);
  } else ctx.lineTo(x1, y1);
}

export interface EdgeText {
  text: string;
  x: number;
  y: number;
}

/** Edges that carry collectives, over the plain ones: thicker with their bytes and in the
 * collective colour; close up, where their labels go (drawn over the boxes, see below). */
export function drawCollectives(
  ctx: CanvasRenderingContext2D,
  scene: Scene,
  seen: Rect,
  detailed: boolean,
): EdgeText[] {
  const scale = Math.max(scene.vp.scale, 0.5);
  const labels: EdgeText[] = [];
  ctx.strokeStyle = COLORS.collective;
  for (const e of scene.view.edges) {
    const label = scene.collectives.get(`${e.from}->${e.to}`);
    const a = rectOf(scene, e.from);
    const b = rectOf(scene, e.to);
    if (!label || !a || !b) continue;
    if (
      !intersects(
        {
          x: Math.min(a.x, b.x),
          y: Math.min(a.y, b.y),
          w: Math.abs(b.x - a.x) + b.w + a.w,
          h: Math.abs(b.y - a.y) + b.h + a.h,
        },
        seen,
      )
    )
      continue;
    ctx.beginPath();
    edgePath(
      ctx,
      a,
      b,
      detailed,
      isBackEdge(a, b) ? backRunY(scene, e.from, e.to, a, b) : undefined,
    );
    ctx.lineWidth = label.width / scale;
    ctx.stroke();
    // above the middle of the edge, clear of the boxes' rows
    if (detailed)
      labels.push({ text: label.text, x: (a.x + a.w + b.x) / 2, y: Math.min(a.y, b.y) - 14 });
  }
  return labels;
}

/** The collective labels, in pill shapes, over everything else. */
export function drawEdgeLabels(ctx: CanvasRenderingContext2D, labels: readonly EdgeText[]): void {
  if (!labels.length) return;
  ctx.font = "600 11px system-ui, sans-serif";
  ctx.textAlign = "center";
  ctx.textBaseline = "middle";
  for (const { text, x, y } of labels) {
    const w = ctx.measureText(text).width + 12;
    ctx.fillStyle = "#f5f3ff";
    ctx.strokeStyle = COLORS.collective;
    ctx.lineWidth = 1;
    ctx.beginPath();
    ctx.roundRect(x - w / 2, y - 10, w, 20, 6);
    ctx.fill();
    ctx.stroke();
    ctx.fillStyle = "#5b21b6";
    ctx.fillText(text, x, y);
  }
  ctx.textAlign = "start";
  ctx.textBaseline = "alphabetic";
}

export function arrowHead(ctx: CanvasRenderingContext2D, b: Rect): void {
  const x = b.x;
  const y = b.y + b.h / 2;
  ctx.moveTo(x, y);
  ctx.lineTo(x - 8, y - 4.5);
  ctx.lineTo(x - 8, y + 4.5);
  ctx.closePath();
}

/** Back-edge runs per layout: found once among all boxes, again while a box is dragged. */
const backRuns = new WeakMap<Layout, Map<string, number>>();

/** What a back edge's run avoids: the boxes, not the frames of expanded groups (it may cross those); listed once per layout. */
const obstacleLists = new WeakMap<Layout, Rect[]>();
function obstacles(scene: Scene): Iterable<Rect> {
  let list = obstacleLists.get(scene.layout);
  const skip = list
    ? null
    : new Set(scene.groups?.shapes.flatMap((g) => (g.collapsed ? [] : [g.id])));
  if (skip)
    obstacleLists.set(
      scene.layout,
      (list = [...scene.layout.rects].flatMap(([id, r]) => (skip.has(id) ? [] : [r]))),
    );
  return list!;
}

export function backRunY(scene: Scene, from: string, to: string, a: Rect, b: Rect): number {
  if (dragOffset(scene.tool, from) || dragOffset(scene.tool, to))
    return backEdgeRunY(a, b, obstacles(scene));
  let runs = backRuns.get(scene.layout);
  if (!runs) backRuns.set(scene.layout, (runs = new Map()));
  const key = `${from}>${to}`;
  let y = runs.get(key);
  if (y === undefined) runs.set(key, (y = backEdgeRunY(a, b, obstacles(scene))));
  return y;
}
