// The projection window's painting: the index grid with the applications' blocks and the picked
// region, and per port the tensor map with the region read or written, the other applications'
// bands, the halo and a padded read's footprint. projection.ts builds the window and calls these
// as the pick or the drafts change.

import type { ZRange } from "../model/ipf";
import type { OperationProjection, Pick, PortProjection, Region } from "../model/projection";
import { el } from "./dom";
import { hatch } from "./draw";
import {
  BANDS,
  framed,
  gridLines,
  highlight,
  hull,
  OVERLAP,
  PICK_LINE,
  rect,
  sized,
  tensorDims,
  type Paint,
} from "./projectionMaps";

/** A port's figure: the caption above its map and the holder the map is drawn into. */
export interface PortFigure {
  fig: HTMLElement;
  caption: HTMLElement;
  holder: HTMLElement;
}

export function drawGrid(v: OperationProjection, p: Paint, at: ZRange | null, pick: Pick): void {
  const ctx = p.canvas.getContext("2d");
  if (!ctx) return;
  const w = parseFloat(p.canvas.style.width);
  const h = parseFloat(p.canvas.style.height);
  ctx.clearRect(0, 0, w, h);
  ctx.fillStyle = "#f8fafc";
  ctx.fillRect(0, 0, w, h);
  // the applications' blocks in the held slice (for a point pick) or all of them
  const point = pick.kind === "point" ? pick.point : null;
  const slice = (r: ZRange) =>
    !point ||
    r.start.every((s, d) => p.dims.includes(d) || (s <= point[d]! && point[d]! < r.end[d]!));
  v.applications.forEach((a, i) => {
    const box = slice(a.index) ? rect(p, a.index) : null;
    if (!box) return;
    ctx.fillStyle = BANDS[i % BANDS.length]!;
    ctx.fillRect(...box);
  });
  gridLines(ctx, p, w, h);
  v.applications.forEach((a) => {
    const box = slice(a.index) ? rect(p, a.index) : null;
    if (!box) return;
    ctx.strokeStyle = "#475569";
    ctx.lineWidth = 1.5;
    ctx.strokeRect(box[0] + 0.75, box[1] + 0.75, box[2] - 1.5, box[3] - 1.5);
  });
  const box = at ? rect(p, at) : null;
  if (box) highlight(ctx, box);
}

export function drawPort(port: PortProjection, g: Region | null, f: PortFigure | undefined): void {
  if (!f) return;
  const verb = port.side === "inputs" ? "reads" : "writes";
  const axes = port.axes ? ` (${port.axes.join(", ")})` : "";
  const head = `${port.side === "inputs" ? "input" : "output"} ${port.port}: ${port.label}${axes}`;
  if (!g || !port.tensorRange || g.raw.rank !== port.tensorRange.rank) {
    f.caption.textContent = `${head} — no region to show`;
    f.holder.replaceChildren();
    f.fig.dataset.region = "";
    return;
  }
  const clipped = !g.raw.equals(g.region);
  const words = [`${head} ${verb} ${g.region}`];
  if (clipped) words.push(`(footprint ${g.raw}, clipped to the tensor ${port.tensorRange})`);
  if (g.overlaps.length)
    words.push(`· applications overlap (halo) ${g.overlaps.map(String).join(" ")}`);
  else if (g.shared) words.push("· the same for every application");
  f.caption.textContent = words.join(" ");
  f.fig.dataset.region = `${g.region}`;
  f.fig.dataset.raw = `${g.raw}`;
  f.fig.dataset.bands = g.bands.map((b) => `${b.region}`).join(" ");
  f.fig.dataset.overlaps = g.overlaps.map(String).join(" ");
  f.fig.classList.toggle("halo", g.overlaps.length > 0);
  const t = port.tensorRange;
  const extent = g.raw.isEmpty ? t : hull([t, g.raw]);
  const d = tensorDims(t, [g.raw, ...g.bands.map((b) => b.region)]);
  const canvas = el("canvas", { class: "geon-ipf-map", "aria-label": `region of ${port.label}` });
  const p = sized(canvas, extent, d, 320, 130);
  const ctx = canvas.getContext("2d");
  f.holder.replaceChildren(framed(canvas, d, port.axes, extent));
  if (!ctx) return;
  const w = parseFloat(canvas.style.width);
  const h = parseFloat(canvas.style.height);
  ctx.fillStyle = "#eef0f4";
  ctx.fillRect(0, 0, w, h);
  hatch(ctx, [0, 0, w, h], "rgba(100, 116, 139, 0.35)"); // past the tensor's edge: padding
  const tb = rect(p, t);
  if (tb) {
    ctx.fillStyle = "#f8fafc";
    ctx.fillRect(...tb);
  }
  g.bands.forEach((b, i) => {
    const box = rect(p, b.region);
    if (!box) return;
    ctx.fillStyle = BANDS[i % BANDS.length]!;
    ctx.fillRect(...box);
  });
  gridLines(ctx, p, w, h);
  g.bands.forEach((b) => {
    const box = rect(p, b.region);
    if (!box) return;
    ctx.strokeStyle = "#475569";
    ctx.lineWidth = 1;
    ctx.strokeRect(box[0] + 0.5, box[1] + 0.5, box[2] - 1, box[3] - 1);
  });
  if (tb) {
    ctx.strokeStyle = "#1d2430";
    ctx.lineWidth = 1;
    ctx.strokeRect(tb[0] + 0.5, tb[1] + 0.5, tb[2] - 1, tb[3] - 1);
  }
  const rb = rect(p, g.region);
  if (rb) highlight(ctx, rb);
  // the halo on top: cells that two applications with different regions both read
  for (const o of g.overlaps) {
    const box = rect(p, o);
    if (!box) continue;
    ctx.fillStyle = OVERLAP;
    ctx.fillRect(...box);
    ctx.strokeStyle = "#c2410c";
    ctx.lineWidth = 2;
    ctx.strokeRect(box[0] + 1, box[1] + 1, box[2] - 2, box[3] - 2);
  }
  const raw = clipped ? rect(p, g.raw) : null;
  if (raw) {
    ctx.save();
    ctx.setLineDash([4, 3]);
    ctx.strokeStyle = PICK_LINE;
    ctx.lineWidth = 1.5;
    ctx.strokeRect(raw[0] + 1, raw[1] + 1, raw[2] - 2, raw[3] - 2);
    ctx.restore();
  }
}
