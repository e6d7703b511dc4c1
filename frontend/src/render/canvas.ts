// Drawing: reads a graph view and its layout and paints them on a canvas. It changes nothing.

import type { Box, GraphView } from "../model/document";
import type { Layout, Rect } from "./layout";

export const COLORS = {
  background: "#f6f7fa",
  tensorFill: "#e3edfd",
  tensorStroke: "#2f6fde",
  operationFill: "#fff1dc",
  operationStroke: "#c7781a",
  issueStroke: "#d92d20",
  edge: "#7a8599",
  text: "#1d2430",
  subtext: "#5b6677",
} as const;

/** Where the layout lands on the canvas, in CSS pixels: fit, centred, never enlarged. */
export interface Viewport {
  scale: number;
  dx: number;
  dy: number;
}

export function fitViewport(layout: Layout, width: number, height: number): Viewport {
  const scale = Math.min(1, width / Math.max(layout.width, 1), height / Math.max(layout.height, 1));
  return { scale, dx: (width - layout.width * scale) / 2, dy: (height - layout.height * scale) / 2 };
}

export function toScreen(rect: Rect, vp: Viewport): Rect {
  return { x: vp.dx + rect.x * vp.scale, y: vp.dy + rect.y * vp.scale, w: rect.w * vp.scale, h: rect.h * vp.scale };
}

function roundRect(ctx: CanvasRenderingContext2D, r: Rect, radius: number): void {
  ctx.beginPath();
  ctx.roundRect(r.x, r.y, r.w, r.h, radius);
}

function border(r: Rect, toward: { x: number; y: number }): { x: number; y: number } {
  const cx = r.x + r.w / 2;
  const cy = r.y + r.h / 2;
  const dx = toward.x - cx;
  const dy = toward.y - cy;
  if (dx === 0 && dy === 0) return { x: cx, y: cy };
  const t = Math.min(Math.abs(r.w / 2 / (dx || 1e-9)), Math.abs(r.h / 2 / (dy || 1e-9)));
  return { x: cx + dx * t, y: cy + dy * t };
}

function drawEdge(ctx: CanvasRenderingContext2D, from: Rect, to: Rect): void {
  const a = border(from, { x: to.x + to.w / 2, y: to.y + to.h / 2 });
  const b = border(to, { x: from.x + from.w / 2, y: from.y + from.h / 2 });
  ctx.strokeStyle = COLORS.edge;
  ctx.fillStyle = COLORS.edge;
  ctx.lineWidth = 1.5;
  ctx.beginPath();
  ctx.moveTo(a.x, a.y);
  ctx.lineTo(b.x, b.y);
  ctx.stroke();
  const angle = Math.atan2(b.y - a.y, b.x - a.x);
  ctx.beginPath();
  ctx.moveTo(b.x, b.y);
  ctx.lineTo(b.x - 9 * Math.cos(angle - 0.4), b.y - 9 * Math.sin(angle - 0.4));
  ctx.lineTo(b.x - 9 * Math.cos(angle + 0.4), b.y - 9 * Math.sin(angle + 0.4));
  ctx.closePath();
  ctx.fill();
}

function drawBox(ctx: CanvasRenderingContext2D, box: Box, r: Rect, issues: number, scale: number): void {
  const tensor = box.kind === "tensor";
  roundRect(ctx, r, tensor ? 4 : 12);
  ctx.fillStyle = tensor ? COLORS.tensorFill : COLORS.operationFill;
  ctx.fill();
  ctx.lineWidth = issues ? 3 : 1.5;
  ctx.strokeStyle = issues ? COLORS.issueStroke : tensor ? COLORS.tensorStroke : COLORS.operationStroke;
  ctx.stroke();
  ctx.textAlign = "center";
  ctx.textBaseline = "middle";
  const size = Math.max(8, 13 * scale);
  ctx.fillStyle = COLORS.text;
  ctx.font = `600 ${size}px system-ui, sans-serif`;
  ctx.fillText(box.title, r.x + r.w / 2, r.y + r.h * 0.38, r.w - 8);
  ctx.fillStyle = COLORS.subtext;
  ctx.font = `${size * 0.85}px system-ui, sans-serif`;
  ctx.fillText(box.subtitle, r.x + r.w / 2, r.y + r.h * 0.7, r.w - 8);
}

/** Paint the whole view; ``issues`` counts the issues per node id. */
export function drawGraph(
  ctx: CanvasRenderingContext2D,
  view: GraphView,
  layout: Layout,
  vp: Viewport,
  issues: Map<string, number>,
  size: { width: number; height: number },
): void {
  ctx.fillStyle = COLORS.background;
  ctx.fillRect(0, 0, size.width, size.height);
  const screen = new Map<string, Rect>();
  for (const [id, rect] of layout.rects) screen.set(id, toScreen(rect, vp));
  for (const edge of view.edges) {
    const from = screen.get(edge.from);
    const to = screen.get(edge.to);
    if (from && to) drawEdge(ctx, from, to);
  }
  for (const box of view.boxes) {
    const r = screen.get(box.id);
    if (r) drawBox(ctx, box, r, issues.get(box.id) ?? 0, vp.scale);
  }
}
