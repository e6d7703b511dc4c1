// Drawing: reads a scene (view, layout, viewport, selection, issues, the tool's preview, who else
// is here) and paints it. It changes nothing. Boxes outside the view are skipped, and when
// zoomed far out boxes are drawn as plain shapes batched by colour, so a graph of thousands of
// nodes pans smoothly.

import type { Box, GraphView, Issue, Point } from "../model/document";
import { dragOffset, type Tool } from "../tools/tools";
import { chipWidth, type Layout } from "./layout";
import { intersects, toWorld, type Rect, type Viewport } from "./viewport";

export const COLORS = {
  background: "#f6f7fa",
  grid: "#e8ebf1",
  tensorFill: "#e3edfd",
  tensorStroke: "#2f6fde",
  operationFill: "#fff1dc",
  operationStroke: "#c7781a",
  selected: "#0b57d0",
  issueStroke: "#d92d20",
  issueFill: "#fde8e7",
  edge: "#7a8599",
  wire: "#0b57d0",
  text: "#1d2430",
  subtext: "#5b6677",
  search: "#f5b700",
} as const;

/** One colour per axis, by order of declaration (the same on every client). */
export const AXIS_PALETTE = ["#1f77b4", "#d6462b", "#2ca02c", "#9467bd", "#e08a00", "#17becf", "#c2417f", "#6b7d12", "#8c564b", "#4a5bd6"];

export function axisColor(axis: string, order: readonly string[]): string {
  const i = order.indexOf(axis);
  return i < 0 ? "#8a94a6" : AXIS_PALETTE[i % AXIS_PALETTE.length]!;
}

export interface PresenceMark {
  user: string;
  color: string;
  selection: string[];
}

export interface Scene {
  view: GraphView;
  layout: Layout;
  vp: Viewport;
  size: { width: number; height: number };
  selected: ReadonlySet<string>;
  issues: ReadonlyMap<string, Issue[]>;
  /** Axis references named by the issues of each node: their chips are outlined in red. */
  issueAxes: ReadonlyMap<string, ReadonlySet<string>>;
  axisOrder: readonly string[];
  tool: Tool;
  presence: readonly PresenceMark[];
  found: ReadonlySet<string>;
}

const DETAIL_SCALE = 0.45;

function rectOf(scene: Scene, id: string): Rect | undefined {
  const r = scene.layout.rects.get(id);
  if (!r) return undefined;
  const off = dragOffset(scene.tool, id);
  return off ? { x: r.x + off.x, y: r.y + off.y, w: r.w, h: r.h } : r;
}

function visibleWorld(scene: Scene): Rect {
  const a = toWorld({ x: 0, y: 0 }, scene.vp);
  const b = toWorld({ x: scene.size.width, y: scene.size.height }, scene.vp);
  return { x: a.x - 20, y: a.y - 20, w: b.x - a.x + 40, h: b.y - a.y + 40 };
}

function edgePath(ctx: CanvasRenderingContext2D, a: Rect, b: Rect, detailed: boolean): void {
  const x0 = a.x + a.w;
  const y0 = a.y + a.h / 2;
  const x1 = b.x;
  const y1 = b.y + b.h / 2;
  ctx.moveTo(x0, y0);
  if (detailed) {
    const c = Math.max(30, Math.abs(x1 - x0) / 2);
    ctx.bezierCurveTo(x0 + c, y0, x1 - c, y1, x1, y1);
  } else ctx.lineTo(x1, y1);
}

function arrowHead(ctx: CanvasRenderingContext2D, b: Rect): void {
  const x = b.x;
  const y = b.y + b.h / 2;
  ctx.moveTo(x, y);
  ctx.lineTo(x - 8, y - 4.5);
  ctx.lineTo(x - 8, y + 4.5);
  ctx.closePath();
}

function drawChips(ctx: CanvasRenderingContext2D, scene: Scene, box: Box, r: Rect, bad: ReadonlySet<string> | undefined): void {
  let x = r.x + 10;
  const y = r.y + r.h - 24;
  ctx.font = "600 11px ui-monospace, SFMono-Regular, Menlo, monospace";
  ctx.textBaseline = "middle";
  ctx.textAlign = "left";
  for (const chip of box.chips) {
    const w = chipWidth(chip.ref, chip.length);
    if (x + w > r.x + r.w - 6) break;
    const colour = axisColor(chip.axis.split("*")[0] ?? chip.axis, scene.axisOrder);
    ctx.beginPath();
    ctx.roundRect(x, y, w, 17, 8.5);
    ctx.fillStyle = colour;
    ctx.fill();
    if (bad?.has(chip.ref) || bad?.has(chip.axis)) {
      ctx.lineWidth = 2.5;
      ctx.strokeStyle = COLORS.issueStroke;
      ctx.stroke();
    }
    ctx.fillStyle = "#fff";
    ctx.fillText(`${chip.ref} ${chip.length ?? "?"}`, x + 8, y + 9);
    x += w + 4;
  }
}

function drawBox(ctx: CanvasRenderingContext2D, scene: Scene, box: Box, r: Rect): void {
  const tensor = box.kind === "tensor";
  const issues = scene.issues.get(box.id);
  ctx.beginPath();
  ctx.roundRect(r.x, r.y, r.w, r.h, tensor ? 5 : 14);
  ctx.fillStyle = issues ? COLORS.issueFill : tensor ? COLORS.tensorFill : COLORS.operationFill;
  ctx.fill();
  ctx.lineWidth = issues ? 2.5 : 1.5;
  ctx.strokeStyle = issues ? COLORS.issueStroke : tensor ? COLORS.tensorStroke : COLORS.operationStroke;
  ctx.stroke();
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
  ctx.fillStyle = COLORS.text;
  ctx.textBaseline = "middle";
  if (tensor) {
    ctx.textAlign = "left";
    ctx.font = "600 14px system-ui, sans-serif";
    ctx.fillText(box.title, r.x + 10, r.y + 16, r.w - 20);
    const tw = Math.min(ctx.measureText(box.title).width, r.w - 20);
    ctx.fillStyle = COLORS.subtext;
    ctx.font = "12px system-ui, sans-serif";
    ctx.fillText(box.subtitle, r.x + 16 + tw, r.y + 16, Math.max(0, r.w - 30 - tw));
    drawChips(ctx, scene, box, r, scene.issueAxes.get(box.id));
    // the handle to drag a connection from
    ctx.beginPath();
    ctx.arc(r.x + r.w, r.y + r.h / 2, 5, 0, Math.PI * 2);
    ctx.fillStyle = "#fff";
    ctx.fill();
    ctx.lineWidth = 1.5;
    ctx.strokeStyle = COLORS.tensorStroke;
    ctx.stroke();
  } else {
    ctx.textAlign = "center";
    ctx.font = "600 14px system-ui, sans-serif";
    ctx.fillText(box.title, r.x + r.w / 2, r.y + r.h / 2, r.w - 16);
  }
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
    ctx.fillText(issues.length > 9 ? "9+" : String(issues.length), cx, cy + 0.5);
  }
}

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

  // edges, batched in one path
  ctx.beginPath();
  const heads: Rect[] = [];
  for (const e of scene.view.edges) {
    const a = rectOf(scene, e.from);
    const b = rectOf(scene, e.to);
    if (!a || !b) continue;
    const span = { x: Math.min(a.x, b.x), y: Math.min(a.y, b.y), w: Math.abs(b.x - a.x) + b.w + a.w, h: Math.abs(b.y - a.y) + b.h + a.h };
    if (!intersects(span, seen)) continue;
    edgePath(ctx, a, b, detailed);
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

  let drawn = 0;
  if (detailed) {
    for (const box of scene.view.boxes) {
      const r = rectOf(scene, box.id);
      if (!r || !intersects(r, seen)) continue;
      drawBox(ctx, scene, box, r);
      drawn += 1;
    }
  } else {
    // far out: plain shapes, one path per style
    const groups = new Map<string, Rect[]>();
    for (const box of scene.view.boxes) {
      const r = rectOf(scene, box.id);
      if (!r || !intersects(r, seen)) continue;
      const key = scene.issues.has(box.id) ? "issue" : scene.selected.has(box.id) ? "selected" : box.kind;
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
  }

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

/** The minimap: every box as a dot of its kind, and the part of the graph in view. */
export function drawMinimap(ctx: CanvasRenderingContext2D, scene: Scene, map: { width: number; height: number; world: Rect }): void {
  const { world } = map;
  const s = Math.min(map.width / Math.max(world.w, 1), map.height / Math.max(world.h, 1));
  const ox = (map.width - world.w * s) / 2 - world.x * s;
  const oy = (map.height - world.h * s) / 2 - world.y * s;
  ctx.fillStyle = "rgba(255, 255, 255, 0.92)";
  ctx.fillRect(0, 0, map.width, map.height);
  const groups: Record<string, Path2D> = { tensor: new Path2D(), operation: new Path2D(), issue: new Path2D() };
  for (const box of scene.view.boxes) {
    const r = scene.layout.rects.get(box.id);
    if (!r) continue;
    groups[scene.issues.has(box.id) ? "issue" : box.kind]!.rect(ox + r.x * s, oy + r.y * s, Math.max(1.5, r.w * s), Math.max(1.5, r.h * s));
  }
  ctx.fillStyle = COLORS.tensorStroke;
  ctx.fill(groups.tensor!);
  ctx.fillStyle = COLORS.operationStroke;
  ctx.fill(groups.operation!);
  ctx.fillStyle = COLORS.issueStroke;
  ctx.fill(groups.issue!);
  const v = visibleWorld(scene);
  ctx.lineWidth = 1.5;
  ctx.strokeStyle = COLORS.selected;
  ctx.fillStyle = "rgba(11, 87, 208, 0.06)";
  const frame: [number, number, number, number] = [ox + (v.x + 20) * s, oy + (v.y + 20) * s, (v.w - 40) * s, (v.h - 40) * s];
  ctx.fillRect(...frame);
  ctx.strokeRect(...frame);
}

/** The world point under a click on the minimap. */
export function minimapToWorld(p: Point, map: { width: number; height: number; world: Rect }): Point {
  const { world } = map;
  const s = Math.min(map.width / Math.max(world.w, 1), map.height / Math.max(world.h, 1));
  const ox = (map.width - world.w * s) / 2 - world.x * s;
  const oy = (map.height - world.h * s) / 2 - world.y * s;
  return { x: (p.x - ox) / s, y: (p.y - oy) / s };
}

/** What is under a world point: the topmost box, and whether the pointer is on its handle. */
export function hitTest(view: GraphView, layout: Layout, p: Point, scale: number): { id: string; kind: Box["kind"]; zone: "body" | "handle" } | null {
  const slack = 9 / scale;
  for (let i = view.boxes.length - 1; i >= 0; i--) {
    const box = view.boxes[i]!;
    const r = layout.rects.get(box.id);
    if (!r) continue;
    if (box.kind === "tensor" && Math.hypot(p.x - (r.x + r.w), p.y - (r.y + r.h / 2)) <= slack) return { id: box.id, kind: box.kind, zone: "handle" };
    if (p.x >= r.x && p.x <= r.x + r.w && p.y >= r.y && p.y <= r.y + r.h) return { id: box.id, kind: box.kind, zone: "body" };
  }
  return null;
}
