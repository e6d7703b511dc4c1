// Drawing a scene onto the editor's canvas and minimap, at most once per animation frame: the
// canvas's size (as a ResizeObserver last saw it, so no frame forces a layout), its backing store
// at the device's pixel ratio, the minimap's boxes drawn once per change of content (a pan
// only moves its frame), and a large graph moving far out drawn from an image until it rests
// (render/gestureCache.ts). What to draw comes from the editor (``Scene``); nothing here changes it.

import { drawScene } from "./canvas";
import { GestureCache } from "./gestureCache";
import type { Scene } from "./scene";
import { drawMinimap, drawMinimapFrame, minimapWorld } from "./minimap";
import type { Size } from "./placement";

export class Painter {
  private canvasSize: Size | null = null;
  private minimapSize: Size | null = null;
  private minimapBase: { key: unknown[]; image: HTMLCanvasElement } | null = null;
  private minimapDeferred = false;
  private frame = 0;
  private readonly gesture = new GestureCache(() => this.invalidate());

  /** ``onFrame`` runs in the animation frame that ``invalidate`` asks for. */
  constructor(
    readonly canvas: HTMLCanvasElement,
    readonly minimap: HTMLCanvasElement,
    private readonly onFrame: () => void,
  ) {
    new ResizeObserver((entries) => {
      const box = entries[0]?.contentRect;
      if (box) this.canvasSize = { width: box.width, height: box.height };
      this.invalidate();
    }).observe(canvas);
  }

  /** The canvas's size in CSS pixels. */
  size(): Size {
    if (!this.canvasSize)
      this.canvasSize = {
        width: this.canvas.clientWidth || 800,
        height: this.canvas.clientHeight || 600,
      };
    return this.canvasSize;
  }

  /** Paint in the next animation frame (once, however often it is asked). */
  invalidate(): void {
    if (this.frame) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      this.onFrame();
    });
  }

  /** Draw ``scene`` (none: only the backing store follows the size); ``content`` changes whenever the minimap's boxes must be drawn again. Whether it drew. */
  paint(scene: Scene | null, content: unknown): boolean {
    const { width, height } = this.size();
    const ratio = window.devicePixelRatio || 1;
    if (
      this.canvas.width !== Math.round(width * ratio) ||
      this.canvas.height !== Math.round(height * ratio)
    ) {
      this.canvas.width = Math.round(width * ratio);
      this.canvas.height = Math.round(height * ratio);
    }
    const ctx = this.canvas.getContext("2d");
    if (!ctx || !scene) return false;
    // what the picture depends on besides the view: a pan or zoom far out keeps all of it (of
    // the tool, only the previews drawScene draws: a drag-pan makes a new tool every move)
    const tool = scene.tool.kind === "idle" || scene.tool.kind === "panning" ? null : scene.tool;
    const key = [
      scene.view,
      scene.layout,
      content,
      tool,
      scene.pins,
      scene.marks?.highlight,
      scene.marks?.stages,
      width,
      height,
      ratio,
    ];
    if (!this.gesture.paint(ctx, scene, key)) drawScene(ctx, scene);
    this.paintMinimap(scene, ratio, content);
    return true;
  }

  private paintMinimap(scene: Scene, ratio: number, content: unknown): void {
    this.minimapSize ??= { width: this.minimap.clientWidth, height: this.minimap.clientHeight };
    const { width: mw, height: mh } = this.minimapSize;
    const m = this.minimap.getContext("2d");
    if (!mw || !mh || !m) return;
    const map = { width: mw, height: mh, world: minimapWorld(scene.layout.rects.values()) };
    if (this.minimap.width !== Math.round(mw * ratio)) this.minimap.width = Math.round(mw * ratio);
    if (this.minimap.height !== Math.round(mh * ratio))
      this.minimap.height = Math.round(mh * ratio);
    // the boxes are drawn once per change of layout or content; a pan only moves the frame
    const key = [scene.layout, content, mw, mh];
    const base = this.minimapBase;
    if (!base || base.key.some((k, i) => k !== key[i])) {
      // the boxes of a large graph are drawn on the minimap just after the first paint
      if (!base && scene.view.boxes.length > 500 && !this.minimapDeferred) {
        this.minimapDeferred = true;
        setTimeout(() => this.invalidate(), 0);
        return;
      }
      const image = document.createElement("canvas");
      image.width = this.minimap.width;
      image.height = this.minimap.height;
      const b = image.getContext("2d")!;
      b.setTransform(ratio, 0, 0, ratio, 0, 0);
      drawMinimap(b, scene, map);
      this.minimapBase = { key, image };
    }
    m.setTransform(1, 0, 0, 1, 0, 0);
    m.clearRect(0, 0, this.minimap.width, this.minimap.height);
    m.drawImage(this.minimapBase!.image, 0, 0);
    m.setTransform(ratio, 0, 0, ratio, 0, 0);
    drawMinimapFrame(m, scene, map);
  }
}
