// Small Canvas2D helpers shared by the panels' maps.

export type Box = [x: number, y: number, w: number, h: number];

/** Diagonal hatching inside ``box`` (gaps, padding). */
export function hatch(
  ctx: CanvasRenderingContext2D,
  [x, y, w, h]: Box,
  color: string,
  lineWidth = 1,
  spacing = 6,
): void {
  ctx.save();
  ctx.beginPath();
  ctx.rect(x, y, w, h);
  ctx.clip();
  ctx.strokeStyle = color;
  ctx.lineWidth = lineWidth;
  for (let t = -h; t < w; t += spacing) {
    ctx.beginPath();
    ctx.moveTo(x + t, y + h);
    ctx.lineTo(x + t + h, y);
    ctx.stroke();
  }
  ctx.restore();
}
