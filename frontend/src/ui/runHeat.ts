// An output of a run as the run panel shows it: the view the server sends (a 1-D or 2-D slice,
// its range, the sharded run's difference from the logical one) drawn as a blue-white-red heat
// map.

export interface ResultView {
  key: string;
  shape: number[];
  dtype: string;
  axes: string[] | null;
  at: number[];
  viewShape: number[];
  limit: number;
  min: number | null;
  max: number | null;
  values: (number | null)[];
  maxAbsDiff: number | null;
}

/** A blue-white-red colour for ``v`` in [min, max] (white at the middle). */
export function heatColor(v: number | null, min: number, max: number): string {
  if (v === null) return "#9ca3af";
  const t = max > min ? (v - min) / (max - min) : 0.5;
  const a = Math.max(0, Math.min(1, t));
  const mix = (from: number[], to: number[], k: number) =>
    from.map((c, i) => Math.round(c + (to[i]! - c) * k));
  const rgb =
    a < 0.5
      ? mix([37, 99, 235], [248, 250, 252], a * 2)
      : mix([248, 250, 252], [220, 38, 38], (a - 0.5) * 2);
  return `rgb(${rgb.join(",")})`;
}

export function drawHeat(canvas: HTMLCanvasElement, r: ResultView): void {
  const ctx = canvas.getContext("2d");
  if (!ctx) return;
  const [rows, cols] =
    r.viewShape.length === 2 ? [r.viewShape[0]!, r.viewShape[1]!] : [1, r.viewShape[0] ?? 1];
  const W = canvas.width;
  const H = canvas.height;
  const cw = W / Math.max(1, cols);
  const ch = H / Math.max(1, rows);
  const min = r.min ?? 0;
  const max = r.max ?? 0;
  for (let i = 0; i < rows; i++) {
    for (let j = 0; j < cols; j++) {
      ctx.fillStyle = heatColor(r.values[i * cols + j] ?? null, min, max);
      ctx.fillRect(j * cw, i * ch, Math.ceil(cw), Math.ceil(ch));
    }
  }
}
