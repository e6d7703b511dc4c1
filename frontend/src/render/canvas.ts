// Drawing: reads a scene (view, layout, viewport, selection, issues, the tool's preview, who else
// is here) and paints it. It changes nothing. Boxes outside the view are skipped, and when
// zoomed far out boxes are drawn as plain shapes batched by colour, so a graph of thousands of
// nodes pans smoothly.

import type { Box, GraphView, Point } from "../model/document";
import { drawBundled, drawCollapsed, drawFrames } from "./groupPaint";
import type { Layout } from "./layout";
import { intersects, type Rect } from "./viewport";
import { drawFarPins } from "./pins";
import { drawBands, drawHighlight, stageBands } from "./marks";
import { isBackEdge } from "./routes";
import { drawDetailed, drawTitles, type Placed } from "./boxPaint";
import { COLORS } from "./colors";
import { arrowHead, backRunY, drawCollectives, drawEdgeLabels, edgePath } from "./edgePaint";
import { rectOf, visibleWorld, type Scene } from "./scene";

const DETAIL_SCALE = 0.45;
/** Between this and DETAIL_SCALE, boxes are plain shapes with their titles in a fixed screen size. */
const TITLE_SCALE = 0.26;

/** Paint the whole scene. Returns how many boxes were drawn (the rest were out of view). */
export function drawScene(ctx: CanvasRenderingContext2D, scene: Scene): number {
  const { vp, size } = scene;
  const ratio = window.devicePixelRatio || 1;
  ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
  ctx.fillStyle = COLORS.background;
  ctx.fillRect(0, 0, size.width, size.height);
  ctx.setTransform(vp.scale * ratio, 0, 0, vp.scale * ratio, vp.dx * ratio, vp.dy * ratio);
  const seen = visibleWorld(scene);
  const detailed = vp.scale >= DETAIL_SCALE;
  if (scene.marks?.stages && scene.groups)
    drawBands(ctx, stageBands(scene.marks.stages, scene.groups.shapes, scene.layout.rects), vp);
  if (scene.groups) drawFrames(ctx, scene.groups, scene.layout, seen, vp, ratio);

  // edges, batched in one path
  ctx.beginPath();
  const heads: Rect[] = [];
  for (const e of scene.view.edges) {
    const a = rectOf(scene, e.from);
    const b = rectOf(scene, e.to);
    if (!a || !b) continue;
    const span = {
      x: Math.min(a.x, b.x),
      y: Math.min(a.y, b.y),
      w: Math.abs(b.x - a.x) + b.w + a.w,
      h: Math.abs(b.y - a.y) + b.h + a.h,
    };
    if (!intersects(span, seen)) continue;
    edgePath(
      ctx,
      a,
      b,
      detailed,
      isBackEdge(a, b) ? backRunY(scene, e.from, e.to, a, b) : undefined,
    );
    if (detailed) heads.push(b);
  }
  ctx.lineWidth = 1.5 / Math.max(vp.scale, 0.5);
  ctx.strokeStyle = COLORS.edge;
  ctx.stroke();
  if (heads.length) {
    ctx.beginPath();
    for (const b of heads) arrowHead(ctx, b);
    ctx.fillStyle = COLORS.edge;
    ctx.fill();
  }
  drawHighlight(
    ctx,
    scene.marks?.highlight ?? null,
    scene.selected,
    scene.layout.rects,
    vp,
    (a, b) =>
      edgePath(
        ctx,
        a,
        b,
        detailed,
        isBackEdge(a, b)
          ? backRunY(scene, scene.marks!.highlight!.from, scene.marks!.highlight!.to, a, b)
          : undefined,
      ),
  );
  if (scene.groups)
    drawBundled(ctx, scene.groups, scene.layout, vp, (e, a, b) =>
      edgePath(
        ctx,
        a,
        b,
        detailed,
        isBackEdge(a, b) ? backRunY(scene, e.from, e.to, a, b) : undefined,
      ),
    );
  const edgeLabels = scene.collectives.size ? drawCollectives(ctx, scene, seen, detailed) : [];

  let drawn = 0;
  if (detailed) {
    const placed: Placed[] = [];
    for (const box of scene.view.boxes) {
      const r = rectOf(scene, box.id);
      if (r && intersects(r, seen)) placed.push({ box, r });
    }
    drawDetailed(ctx, scene, placed);
    drawn = placed.length;
  } else {
    // far out: plain shapes, one path per style
    const groups = new Map<string, Rect[]>();
    for (const box of scene.view.boxes) {
      const r = rectOf(scene, box.id);
      if (!r || !intersects(r, seen)) continue;
      const key = scene.issues.has(box.id)
        ? "issue"
        : scene.selected.has(box.id)
          ? "selected"
          : box.kind;
      let list = groups.get(key);
      if (!list) groups.set(key, (list = []));
      list.push(r);
      drawn += 1;
    }
    const style: Record<string, [string, string]> = {
      tensor: [COLORS.tensorFill, COLORS.tensorStroke],
      operation: [COLORS.operationFill, COLORS.operationStroke],
      issue: [COLORS.issueFill, COLORS.issueStroke],
      selected: [COLORS.tensorFill, COLORS.selected],
    };
    ctx.lineWidth = 1.5 / vp.scale;
    for (const [key, rects] of groups) {
      ctx.beginPath();
      for (const r of rects) ctx.rect(r.x, r.y, r.w, r.h);
      ctx.fillStyle = style[key]![0];
      ctx.fill();
      ctx.strokeStyle = style[key]![1];
      ctx.stroke();
    }
    if (vp.scale >= TITLE_SCALE) drawTitles(ctx, scene, ratio, seen);
    if (scene.pins?.size)
      drawFarPins(
        ctx,
        scene.pins,
        (id) => [rectOf(scene, id)].find((r) => r && intersects(r, seen)),
        vp,
        ratio,
      );
  }

  if (scene.groups) drawCollapsed(ctx, scene.groups, scene.layout, seen, vp, ratio);
  drawEdgeLabels(ctx, edgeLabels);

  const tool = scene.tool;
  if (tool.kind === "connecting") {
    const a = rectOf(scene, tool.from);
    if (a) {
      ctx.beginPath();
      edgePath(ctx, a, { x: tool.at.x, y: tool.at.y - 0.5, w: 0, h: 1 }, true);
      ctx.lineWidth = 2.5;
      ctx.strokeStyle = COLORS.wire;
      ctx.setLineDash([7, 4]);
      ctx.stroke();
      ctx.setLineDash([]);
    }
  } else if (tool.kind === "selecting") {
    const x = Math.min(tool.from.x, tool.to.x);
    const y = Math.min(tool.from.y, tool.to.y);
    ctx.fillStyle = "rgba(11, 87, 208, 0.08)";
    ctx.fillRect(x, y, Math.abs(tool.to.x - tool.from.x), Math.abs(tool.to.y - tool.from.y));
    ctx.lineWidth = 1 / vp.scale;
    ctx.strokeStyle = COLORS.selected;
    ctx.strokeRect(x, y, Math.abs(tool.to.x - tool.from.x), Math.abs(tool.to.y - tool.from.y));
  }
  ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
  return drawn;
}

/** What is under a world point: the topmost box, and whether the pointer is on its handle. */
export function hitTest(
  view: GraphView,
  layout: Layout,
  p: Point,
  scale: number,
): { id: string; kind: Box["kind"]; zone: "body" | "handle" } | null {
  const slack = 9 / scale;
  for (let i = view.boxes.length - 1; i >= 0; i--) {
    const box = view.boxes[i]!;
    const r = layout.rects.get(box.id);
    if (!r) continue;
    if (box.kind === "tensor" && Math.hypot(p.x - (r.x + r.w), p.y - (r.y + r.h / 2)) <= slack)
      return { id: box.id, kind: box.kind, zone: "handle" };
    if (p.x >= r.x && p.x <= r.x + r.w && p.y >= r.y && p.y <= r.y + r.h)
      return { id: box.id, kind: box.kind, zone: "body" };
  }
  return null;
}
