// The minimap: the whole graph in a corner, every box a dot of its kind (red with issues), each
// group's frame outlined and each collapsed group a block of its colour, the part in view as a
// frame, and a click on it as a point of the graph.

import type { Point } from "../model/document";
import { COLORS } from "./colors";
import { visibleWorld, type Scene } from "./scene";
import { GROUP_COLORS } from "./groupPaint";
import { bounds, type Rect } from "./viewport";

/** A minimap of ``width`` x ``height`` CSS pixels showing ``world`` (graph coordinates). */
export interface MinimapFrame {
  width: number;
  height: number;
  world: Rect;
}

/** What the minimap shows: the graph, with a margin. */
export function minimapWorld(rects: Iterable<Rect>): Rect {
  const all = bounds(rects);
  return { x: all.x - 40, y: all.y - 40, w: all.w + 80, h: all.h + 80 };
}

/** The scale and offset from graph to minimap coordinates (the world centred, aspect kept). */
function transform(map: MinimapFrame): { s: number; ox: number; oy: number } {
  const { world } = map;
  const s = Math.min(map.width / Math.max(world.w, 1), map.height / Math.max(world.h, 1));
  return {
    s,
    ox: (map.width - world.w * s) / 2 - world.x * s,
    oy: (map.height - world.h * s) / 2 - world.y * s,
  };
}

/** Every box as a dot of its kind (the frame of the view is drawn by drawMinimapFrame). */
export function drawMinimap(ctx: CanvasRenderingContext2D, scene: Scene, map: MinimapFrame): void {
  const { s, ox, oy } = transform(map);
  ctx.fillStyle = "rgba(255, 255, 255, 0.92)";
  ctx.fillRect(0, 0, map.width, map.height);
  const frames = new Path2D();
  const collapsed = new Path2D();
  for (const g of scene.groups?.shapes ?? []) {
    const r = scene.layout.rects.get(g.id);
    if (r)
      (g.collapsed ? collapsed : frames).rect(
        ox + r.x * s,
        oy + r.y * s,
        Math.max(2, r.w * s),
        Math.max(2, r.h * s),
      );
  }
  ctx.lineWidth = 1;
  ctx.strokeStyle = GROUP_COLORS.frameStroke;
  ctx.stroke(frames);
  ctx.fillStyle = GROUP_COLORS.boxStroke;
  ctx.fill(collapsed);
  const groups: Record<string, Path2D> = {
    tensor: new Path2D(),
    operation: new Path2D(),
    issue: new Path2D(),
  };
  for (const box of scene.view.boxes) {
    const r = scene.layout.rects.get(box.id);
    if (!r) continue;
    groups[scene.issues.has(box.id) ? "issue" : box.kind]!.rect(
      ox + r.x * s,
      oy + r.y * s,
      Math.max(1.5, r.w * s),
      Math.max(1.5, r.h * s),
    );
  }
  ctx.fillStyle = COLORS.tensorStroke;
  ctx.fill(groups.tensor!);
  ctx.fillStyle = COLORS.operationStroke;
  ctx.fill(groups.operation!);
  ctx.fillStyle = COLORS.issueStroke;
  ctx.fill(groups.issue!);
}

/** The part of the graph in view, as a frame on the minimap (kept inside it). */
export function drawMinimapFrame(
  ctx: CanvasRenderingContext2D,
  scene: Scene,
  map: MinimapFrame,
): void {
  const { s, ox, oy } = transform(map);
  const v = visibleWorld(scene);
  const x0 = Math.max(1, ox + (v.x + 20) * s);
  const y0 = Math.max(1, oy + (v.y + 20) * s);
  const x1 = Math.min(map.width - 1, ox + (v.x + v.w - 20) * s);
  const y1 = Math.min(map.height - 1, oy + (v.y + v.h - 20) * s);
  if (x1 <= x0 || y1 <= y0) return;
  ctx.lineWidth = 1.5;
  ctx.strokeStyle = COLORS.selected;
  ctx.fillStyle = "rgba(11, 87, 208, 0.07)";
  ctx.fillRect(x0, y0, x1 - x0, y1 - y0);
  ctx.strokeRect(x0, y0, x1 - x0, y1 - y0);
}

/** The world point under a click on the minimap. */
export function minimapToWorld(p: Point, map: MinimapFrame): Point {
  const { s, ox, oy } = transform(map);
  return { x: (p.x - ox) / s, y: (p.y - oy) / s };
}
