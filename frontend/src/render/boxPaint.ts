// Drawing boxes: close up, each in full (shape, title, subtitle, axis chips, handle) with the
// marks over it (search hit, selection, others' selections, review pin, issue badge); zoomed out
// a little, the titles alone in a fixed screen size over the plain shapes.

import type { Box } from "../model/document";
import { axisColor, COLORS } from "./colors";
import { chipWidth } from "./layout";
import { drawPin } from "./pins";
import { rectOf, type Scene } from "./scene";
import { intersects, type Rect } from "./viewport";

export interface Placed {
  box: Box;
  r: Rect;
}

/**
 * The boxes in view, drawn in passes that each set a style once: shapes by style, then titles,
 * subtitles, axis chips by colour, chip labels, handles, and last the few overlays (issues,
 * selection, presence, search). Switching fonts and styles per box is what makes a canvas slow.
 */
export function drawDetailed(ctx: CanvasRenderingContext2D, scene: Scene, placed: Placed[]): void {
  const shapes = new Map<string, Path2D>();
  const shape = (key: string): Path2D => {
    let path = shapes.get(key);
    if (!path) shapes.set(key, (path = new Path2D()));
    return path;
  };
  for (const { box, r } of placed) {
    const key = scene.issues.has(box.id) ? "issue" : box.kind;
    shape(key).roundRect(r.x, r.y, r.w, r.h, box.kind === "tensor" ? 5 : 14);
  }
  const styles: Record<string, [string, string, number]> = {
    tensor: [COLORS.tensorFill, COLORS.tensorStroke, 1.5],
    operation: [COLORS.operationFill, COLORS.operationStroke, 1.5],
    issue: [COLORS.issueFill, COLORS.issueStroke, 2.5],
  };
  for (const [key, path] of shapes) {
    const [fill, stroke, width] = styles[key]!;
    ctx.fillStyle = fill;
    ctx.fill(path);
    ctx.lineWidth = width;
    ctx.strokeStyle = stroke;
    ctx.stroke(path);
  }

  // titles
  ctx.fillStyle = COLORS.text;
  ctx.textBaseline = "middle";
  ctx.font = "600 14px system-ui, sans-serif";
  const titleWidth = new Map<string, number>();
  for (const { box, r } of placed) {
    if (box.kind === "tensor") {
      ctx.textAlign = "left";
      ctx.fillText(box.title, r.x + 10, r.y + 16, r.w - 20);
      titleWidth.set(box.id, Math.min(ctx.measureText(box.title).width, r.w - 20));
    } else {
      ctx.textAlign = "center";
      // a sharded operation says how many applications it has under its title
      const sharded = box.subtitle !== "whole" && r.h >= 40;
      ctx.fillText(box.title, r.x + r.w / 2, r.y + r.h / 2 - (sharded ? 7 : 0), r.w - 16);
    }
  }
  // subtitles
  ctx.fillStyle = COLORS.subtext;
  ctx.font = "12px system-ui, sans-serif";
  ctx.textAlign = "left";
  ctx.textAlign = "center";
  for (const { box, r } of placed) {
    if (box.kind === "operation" && box.subtitle !== "whole" && r.h >= 40)
      ctx.fillText(box.subtitle, r.x + r.w / 2, r.y + r.h / 2 + 10, r.w - 16);
  }
  ctx.textAlign = "left";
  for (const { box, r } of placed) {
    if (box.kind !== "tensor") continue;
    const tw = titleWidth.get(box.id) ?? 0;
    ctx.fillText(box.subtitle, r.x + 16 + tw, r.y + 16, Math.max(0, r.w - 30 - tw));
  }
  // axis chips: pills by colour, outlines where an issue names the axis, then the labels
  const pills = new Map<string, Path2D>();
  const bad = new Path2D();
  const labels: [string, number, number][] = [];
  for (const { box, r } of placed) {
    let x = r.x + 10;
    const y = r.y + r.h - 24;
    const flagged = scene.issueAxes.get(box.id);
    for (const chip of box.chips) {
      const w = chipWidth(chip.ref, chip.length);
      if (x + w > r.x + r.w - 6) break;
      const colour = axisColor(chip.axis.split("*")[0] ?? chip.axis, scene.axisOrder);
      let pill = pills.get(colour);
      if (!pill) pills.set(colour, (pill = new Path2D()));
      pill.roundRect(x, y, w, 17, 8.5);
      if (flagged?.has(chip.ref) || flagged?.has(chip.axis)) bad.roundRect(x, y, w, 17, 8.5);
      labels.push([`${chip.ref} ${chip.length ?? "?"}`, x + 8, y + 9]);
      x += w + 4;
    }
  }
  for (const [colour, pill] of pills) {
    ctx.fillStyle = colour;
    ctx.fill(pill);
  }
  ctx.lineWidth = 2.5;
  ctx.strokeStyle = COLORS.issueStroke;
  ctx.stroke(bad);
  ctx.font = "600 11px ui-monospace, SFMono-Regular, Menlo, monospace";
  ctx.fillStyle = "#fff";
  for (const [text, x, y] of labels) ctx.fillText(text, x, y);
  // the handles to drag a connection from
  const handles = new Path2D();
  for (const { box, r } of placed) {
    if (box.kind !== "tensor") continue;
    handles.moveTo(r.x + r.w + 5, r.y + r.h / 2);
    handles.arc(r.x + r.w, r.y + r.h / 2, 5, 0, Math.PI * 2);
  }
  ctx.fillStyle = "#fff";
  ctx.fill(handles);
  ctx.lineWidth = 1.5;
  ctx.strokeStyle = COLORS.tensorStroke;
  ctx.stroke(handles);

  for (const { box, r } of placed) drawOverlays(ctx, scene, box, r);
}

/** What marks one box beyond its shape: search hit, selection, others' selections, issue badge. */
function drawOverlays(ctx: CanvasRenderingContext2D, scene: Scene, box: Box, r: Rect): void {
  if (scene.found.has(box.id)) {
    ctx.lineWidth = 4;
    ctx.strokeStyle = COLORS.search;
    ctx.beginPath();
    ctx.roundRect(r.x - 5, r.y - 5, r.w + 10, r.h + 10, 9);
    ctx.stroke();
  }
  if (scene.selected.has(box.id)) {
    ctx.lineWidth = 2.5;
    ctx.strokeStyle = COLORS.selected;
    ctx.setLineDash([6, 3]);
    ctx.beginPath();
    ctx.roundRect(r.x - 3.5, r.y - 3.5, r.w + 7, r.h + 7, 8);
    ctx.stroke();
    ctx.setLineDash([]);
  }
  let ring = 7;
  for (const p of scene.presence) {
    if (!p.selection.includes(box.id)) continue;
    ctx.lineWidth = 2;
    ctx.strokeStyle = p.color;
    ctx.beginPath();
    ctx.roundRect(r.x - ring, r.y - ring, r.w + 2 * ring, r.h + 2 * ring, 10);
    ctx.stroke();
    ctx.fillStyle = p.color;
    ctx.font = "600 11px system-ui, sans-serif";
    ctx.textAlign = "left";
    ctx.textBaseline = "bottom";
    ctx.fillText(p.user, r.x - ring, r.y - ring - 2);
    ring += 4;
  }
  const pins = scene.pins?.get(box.id);
  if (pins) drawPin(ctx, r.x + 2, r.y + 2, pins);
  const issues = scene.issues.get(box.id);
  if (issues) {
    const cx = r.x + r.w - 2;
    const cy = r.y + 2;
    ctx.beginPath();
    ctx.arc(cx, cy, 10, 0, Math.PI * 2);
    ctx.fillStyle = COLORS.issueStroke;
    ctx.fill();
    ctx.fillStyle = "#fff";
    ctx.font = "700 11px system-ui, sans-serif";
    ctx.textAlign = "center";
    ctx.textBaseline = "middle";
    ctx.fillText(issues.length > 9 ? "9+" : String(issues.length), cx, cy + 0.5);
  }
}

/** Titles in a fixed 11px screen font over the plain shapes of a zoomed-out view. */
export function drawTitles(
  ctx: CanvasRenderingContext2D,
  scene: Scene,
  ratio: number,
  seen: Rect,
): void {
  const { vp } = scene;
  ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
  ctx.font = "600 11px system-ui, sans-serif";
  ctx.textAlign = "center";
  ctx.textBaseline = "middle";
  ctx.fillStyle = COLORS.text;
  for (const box of scene.view.boxes) {
    const r = rectOf(scene, box.id);
    if (!r || !intersects(r, seen)) continue;
    ctx.fillText(
      box.title,
      vp.dx + (r.x + r.w / 2) * vp.scale,
      vp.dy + (r.y + r.h / 2) * vp.scale,
      r.w * vp.scale - 4,
    );
  }
  ctx.setTransform(vp.scale * ratio, 0, 0, vp.scale * ratio, vp.dx * ratio, vp.dy * ratio);
}
