// While the view of a large graph pans or zooms far out (the whole graph within a few canvases),
// a frame is the graph drawn once into an offscreen image, scaled and moved: one drawImage
// instead of thousands of boxes, edges and frames. The image is drawn again when the scale has
// moved too far from the one it was drawn at, and thrown away when anything but the view
// changes. Once the view rests (``REST_MS`` without a move) the scene is drawn in full again, so
// what stays on screen is exactly what drawScene draws.

import { drawScene } from "./canvas";
import { COLORS } from "./colors";
import { minimapWorld } from "./minimap";
import type { Scene } from "./scene";
import type { Rect, Viewport } from "./viewport";

/** How long the view stays still before it is drawn in full. */
const REST_MS = 150;
/** Fewer boxes than this are drawn in full every frame (they are cheap). */
const LARGE = 1000;
/** Far out: the graph at most this many canvases wide and tall (its image stays small). */
const FAR = 2;
/** The image serves scales within this factor of the one it was drawn at. */
const SPAN = 1.5;

/** Whether an image of ``world`` drawn at scale ``drawnAt`` serves a frame at ``scale`` on a canvas of ``size``. */
export function serves(
  world: Rect,
  size: { width: number; height: number },
  scale: number,
  drawnAt: number | null,
): "image" | "new image" | "no" {
  if (world.w * scale > FAR * size.width || world.h * scale > FAR * size.height) return "no";
  if (drawnAt === null) return "new image";
  const k = scale / drawnAt;
  return k <= SPAN && k >= 1 / SPAN ? "image" : "new image";
}

const sameView = (a: Viewport, b: Viewport) =>
  a.scale === b.scale && a.dx === b.dx && a.dy === b.dy;

export class GestureCache {
  private key: readonly unknown[] = [];
  private vp: Viewport | null = null;
  private world: Rect | null = null;
  private image: { canvas: HTMLCanvasElement; scale: number } | null = null;
  private timer = 0;

  /** ``rest`` asks for a paint (the full one, once the view has rested). */
  constructor(private readonly rest: () => void) {}

  /**
   * Paint ``scene`` from the image when only the view moved since the last paint (``key``: what
   * else the picture depends on) and the graph is large and far out. False: draw it in full.
   */
  paint(ctx: CanvasRenderingContext2D, scene: Scene, key: readonly unknown[]): boolean {
    const same = key.length === this.key.length && key.every((k, i) => k === this.key[i]);
    const moved = same && this.vp !== null && !sameView(this.vp, scene.vp);
    if (!same) {
      this.key = key;
      this.world = null;
      this.image = null;
    }
    this.vp = scene.vp;
    if (!moved || scene.view.boxes.length < LARGE) return false;
    this.world ??= minimapWorld(scene.layout.rects.values());
    const use = serves(this.world, scene.size, scene.vp.scale, this.image?.scale ?? null);
    if (use === "no") return false;
    if (use === "new image") this.image = drawn(scene, this.world);
    const { vp, size } = scene;
    const ratio = window.devicePixelRatio || 1;
    ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
    ctx.fillStyle = COLORS.background;
    ctx.fillRect(0, 0, size.width, size.height);
    const w = this.world;
    ctx.drawImage(
      this.image!.canvas,
      vp.dx + w.x * vp.scale,
      vp.dy + w.y * vp.scale,
      w.w * vp.scale,
      w.h * vp.scale,
    );
    window.clearTimeout(this.timer);
    this.timer = window.setTimeout(this.rest, REST_MS);
    return true;
  }
}

/** ``world`` of ``scene`` drawn at the scene's scale into an offscreen canvas. */
function drawn(scene: Scene, world: Rect): { canvas: HTMLCanvasElement; scale: number } {
  const { scale } = scene.vp;
  const ratio = window.devicePixelRatio || 1;
  const canvas = document.createElement("canvas");
  canvas.width = Math.ceil(world.w * scale * ratio);
  canvas.height = Math.ceil(world.h * scale * ratio);
  drawScene(canvas.getContext("2d")!, {
    ...scene,
    vp: { scale, dx: -world.x * scale, dy: -world.y * scale },
    size: { width: world.w * scale, height: world.h * scale },
  });
  return { canvas, scale };
}
