// The drawing primitives of the projection window's maps (ui/projection.ts): a canvas sized for
// a range (square cells while legible), a range's rectangle on it, grid lines, the highlighted
// pick, and the frame that names the axes along its sides.

import { ZRange } from "../model/ipf";
import { el } from "./dom";
import type { Box } from "./draw";
import { mapDims } from "./shards";

export const BANDS = ["#dbeafe", "#dcfce7", "#fef9c3", "#f3e8ff", "#e0f2fe", "#fce7f3"];
const PICK = "rgba(11, 87, 208, 0.55)";
export const PICK_LINE = "#0b57d0";
export const OVERLAP = "rgba(234, 88, 12, 0.5)";

/** Rows and columns of a map: two dims (one dim is one row; none is one cell). */
export type Dims = [number, number];

export interface Paint {
  extent: ZRange;
  dims: Dims;
  canvas: HTMLCanvasElement;
  /** A cell's width and height in CSS pixels: square while that stays legible. */
  cw: number;
  ch: number;
}

/**
 * A canvas sized for ``extent`` in ``dims``, at most ``maxW`` x ``maxH`` CSS pixels: square
 * cells of at most 20 pixels, or, for a long range, cells as wide and as tall as fit.
 */
export function sized(
  canvas: HTMLCanvasElement,
  extent: ZRange,
  dims: Dims,
  maxW: number,
  maxH: number,
): Paint {
  const span = (d: number) => (d < 0 ? 1 : Math.max(1, extent.end[d]! - extent.start[d]!));
  const rows = span(dims[0]);
  const cols = span(dims[1]);
  const square = Math.min(20, maxW / cols, maxH / rows);
  const cw = square >= 4 ? Math.floor(square) : Math.min(20, maxW / cols);
  const ch = square >= 4 ? Math.floor(square) : Math.min(20, maxH / rows);
  const ratio = window.devicePixelRatio || 1;
  canvas.style.width = `${cols * cw}px`;
  canvas.style.height = `${rows * ch}px`;
  canvas.width = Math.round(cols * cw * ratio);
  canvas.height = Math.round(rows * ch * ratio);
  canvas.getContext("2d")?.setTransform(ratio, 0, 0, ratio, 0, 0);
  return { extent, dims, canvas, cw, ch };
}

/** A range's rectangle on a map in CSS pixels (clipped to the extent), or null when it shows no cell. */
export function rect(p: Paint, r: ZRange): [number, number, number, number] | null {
  const along = (d: number): [number, number] => {
    if (d < 0) return [0, 1];
    const lo = Math.max(r.start[d]!, p.extent.start[d]!);
    const hi = Math.min(r.end[d]!, p.extent.end[d]!);
    return [lo - p.extent.start[d]!, hi - p.extent.start[d]!];
  };
  const [r0, r1] = along(p.dims[0]);
  const [c0, c1] = along(p.dims[1]);
  // a range that is empty or outside in a dim that is not shown has no cell here either
  const hidden = r.start.some(
    (s, d) =>
      !p.dims.includes(d) &&
      (s >= r.end[d]! || r.end[d]! <= p.extent.start[d]! || s >= p.extent.end[d]!),
  );
  if (r1 <= r0 || c1 <= c0 || hidden) return null;
  return [c0 * p.cw, r0 * p.ch, (c1 - c0) * p.cw, (r1 - r0) * p.ch];
}

export function gridLines(ctx: CanvasRenderingContext2D, p: Paint, w: number, h: number): void {
  ctx.strokeStyle = "rgba(100, 116, 139, 0.28)";
  ctx.lineWidth = 1;
  ctx.beginPath();
  if (p.cw >= 5) {
    for (let x = p.cw; x < w; x += p.cw) {
      ctx.moveTo(x + 0.5, 0);
      ctx.lineTo(x + 0.5, h);
    }
  }
  if (p.ch >= 5) {
    for (let y = p.ch; y < h; y += p.ch) {
      ctx.moveTo(0, y + 0.5);
      ctx.lineTo(w, y + 0.5);
    }
  }
  ctx.stroke();
}

/** The picked point, application or region: filled and outlined. */
export function highlight(ctx: CanvasRenderingContext2D, [x, y, w, h]: Box): void {
  ctx.fillStyle = PICK;
  ctx.fillRect(x, y, w, h);
  ctx.strokeStyle = PICK_LINE;
  ctx.lineWidth = 2;
  ctx.strokeRect(x + 1, y + 1, w - 2, h - 2);
}

/** The two dims a tensor's map shows: those its regions cut, then the others, in order. */
export function tensorDims(tensor: ZRange, ranges: ZRange[]): Dims {
  const pick = mapDims(tensor, ranges);
  return pick.length === 2 ? [pick[0]!, pick[1]!] : [-1, pick[0] ?? -1];
}

/** The smallest range holding all of them (same rank). */
export function hull(ranges: ZRange[]): ZRange {
  const first = ranges[0]!;
  return new ZRange(
    first.start.map((_, d) => Math.min(...ranges.map((r) => r.start[d]!))),
    first.end.map((_, d) => Math.max(...ranges.map((r) => r.end[d]!))),
  );
}

export const named = (axes: string[] | null, d: number) => (d < 0 ? "" : (axes?.[d] ?? `dim ${d}`));

/** A map with its column axis above and its row axis at the left. */
export function framed(
  canvas: HTMLCanvasElement,
  dims: Dims,
  axes: string[] | null,
  extent: ZRange,
): HTMLElement {
  const ends = (d: number) => (d < 0 ? "" : `${extent.start[d]}…${extent.end[d]! - 1}`);
  return el(
    "div",
    { class: "geon-ipf-frame" },
    el("span", {
      class: "geon-ipf-col-axis",
      text: dims[1] < 0 ? "" : `${named(axes, dims[1])} ${ends(dims[1])}`,
    }),
    el("span", {
      class: "geon-ipf-row-axis",
      text: dims[0] < 0 ? "" : `${named(axes, dims[0])} ${ends(dims[0])}`,
    }),
    canvas,
  );
}
