// A review's pins on the canvas (issue 35): each node holding unresolved threads of the review
// shown gets a speech bubble with their count at its top left, screen-sized when zoomed out.

import type { Rect } from "./viewport";

/** The pin's colour. */
export const PIN_COLOR = "#7a3fc4";

/** A review thread's pin: a speech bubble with the count of unresolved threads on the node. */
export function drawPin(
  ctx: CanvasRenderingContext2D,
  cx: number,
  cy: number,
  count: number,
): void {
  ctx.beginPath();
  ctx.arc(cx, cy, 10, 0, Math.PI * 2);
  ctx.moveTo(cx - 4, cy + 8);
  ctx.lineTo(cx - 9, cy + 15);
  ctx.lineTo(cx + 2, cy + 9.5);
  ctx.fillStyle = PIN_COLOR;
  ctx.fill();
  ctx.fillStyle = "#fff";
  ctx.font = "700 11px system-ui, sans-serif";
  ctx.textAlign = "center";
  ctx.textBaseline = "middle";
  ctx.fillText(count > 9 ? "9+" : String(count), cx, cy + 0.5);
}

/** Far out, each pin at its box's top left in screen pixels (``rects``: the boxes in view). */
export function drawFarPins(
  ctx: CanvasRenderingContext2D,
  pins: ReadonlyMap<string, number>,
  rects: (id: string) => Rect | undefined,
  vp: { dx: number; dy: number; scale: number },
  ratio: number,
): void {
  ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
  for (const [id, count] of pins) {
    const r = rects(id);
    if (r) drawPin(ctx, vp.dx + r.x * vp.scale + 2, vp.dy + r.y * vp.scale + 2, count);
  }
  ctx.setTransform(vp.scale * ratio, 0, 0, vp.scale * ratio, vp.dx * ratio, vp.dy * ratio);
}
