// Reading a run's heat map (issue 21, "Runs"): the cell under the pointer with its index by axis
// name and its value, and a colour bar from the minimum to the maximum with the middle marked.

import "./heatmap.css";
import { el } from "./dom";

/** The (row, column) of the cell under ``x``, ``y`` of a ``width`` x ``height`` map. */
export function cellAt(
  x: number,
  y: number,
  width: number,
  height: number,
  rows: number,
  cols: number,
): [number, number] {
  const clamp = (v: number, n: number) => Math.max(0, Math.min(n - 1, Math.floor(v)));
  return [clamp((y / height) * rows, rows), clamp((x / width) * cols, cols)];
}

/** "H=2, N=5: 0.731" — the sliced dims (``at``), then the row's and column's axes. */
export function hoverText(
  axes: string[],
  at: number[],
  row: number,
  col: number,
  value: number | null,
): string {
  const rank = axes.length;
  const index = rank >= 2 ? [...at.slice(0, rank - 2), row, col] : [col];
  const where = index.map((v, d) => `${axes[d] ?? `dim ${d}`}=${v}`).join(", ");
  return `${where}: ${value === null ? "–" : Number(value.toPrecision(4))}`;
}

/** Three ticks: the minimum, the middle and the maximum, as people read numbers. */
export function ticks(min: number, max: number): string[] {
  const show = (v: number) => String(Number(v.toPrecision(3)));
  return [show(min), show((min + max) / 2), show(max)];
}

/** The colour bar of a map drawn with ``color`` between ``min`` and ``max`` (a gradient, not a canvas). */
export function colorBar(
  min: number,
  max: number,
  width: number,
  color: (v: number, min: number, max: number) => string,
): HTMLElement {
  const stops = [0, 0.25, 0.5, 0.75, 1].map((t) => color(min + (max - min) * t, min, max));
  const bar = el("div", {
    class: "geon-colorbar",
    style: `background:linear-gradient(to right, ${stops.join(", ")})`,
  });
  const [lo, mid, hi] = ticks(min, max);
  return el(
    "div",
    { class: "geon-colorbar-wrap small", style: `width:${Math.max(40, width)}px` },
    bar,
    el(
      "div",
      { class: "geon-colorbar-ticks" },
      el("span", { text: lo! }),
      el("span", { text: mid! }),
      el("span", { text: hi! }),
    ),
  );
}
