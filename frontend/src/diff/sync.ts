// One pan and zoom for every canvas of the diff page: a wheel or a drag on any canvas changes the
// one viewport and every canvas is redrawn with it, so side by side the two versions move together.

import type { Point } from "../model/document";
import { pan, zoomAt, type Viewport } from "../render/viewport";

/** How much one wheel step (deltaY) zooms: e^(−deltaY × this). */
export const WHEEL_ZOOM = 0.0015;

export class SharedViewport {
  private drag: Point | null = null;

  constructor(
    public vp: Viewport,
    /** Called after every change, to redraw all the canvases. */
    private readonly changed: () => void,
  ) {}

  set(vp: Viewport): void {
    this.vp = vp;
    this.changed();
  }

  /** A wheel step at ``at`` (in the canvas's own coordinates, which all canvases share). */
  wheel(deltaY: number, at: Point): void {
    this.set(zoomAt(this.vp, Math.exp(-deltaY * WHEEL_ZOOM), at));
  }

  press(at: Point): void {
    this.drag = at;
  }

  /** The pointer moved: while pressed, the picture follows it. */
  move(at: Point): void {
    if (!this.drag) return;
    const from = this.drag;
    this.drag = at;
    this.set(pan(this.vp, at.x - from.x, at.y - from.y));
  }

  release(): void {
    this.drag = null;
  }
}
