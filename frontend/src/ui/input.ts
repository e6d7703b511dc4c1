// The editor's input: pointer and wheel events on the canvas become steps of the tool state chart
// (tools/tools.ts), a click on the minimap moves the view, and keys run registered actions
// (actions/actions.ts). This module only translates events; ``InputHost`` does what they ask.

import { actionForKey, CONTROL_KEYS, type Commands } from "../actions/actions";
import type { GraphView, Point } from "../model/document";
import { hitTest } from "../render/canvas";
import type { Layout } from "../render/layout";
import { minimapToWorld, minimapWorld } from "../render/minimap";
import { centreOn, pan, toWorld, zoomAt, type Viewport } from "../render/viewport";
import { pointerDown, pointerMove, pointerUp, type Effect, type Tool } from "../tools/tools";

/** What the input reads and moves (the editor). */
export interface InputHost {
  tool: Tool;
  vp: Viewport;
  readonly view: GraphView | null;
  readonly layout: Layout;
  readonly selected: string[];
  size(): { width: number; height: number };
  apply(effect: Effect): void;
  cancel(): void;
  invalidate(): void;
  /** The right-click menu for the node under the pointer (null: the canvas), at client x, y. */
  menu(id: string | null, x: number, y: number): void;
}

/** Pointer, wheel and minimap events drive ``host``'s tool and viewport. */
export function bindCanvas(
  canvas: HTMLCanvasElement,
  minimap: HTMLCanvasElement,
  host: InputHost,
): void {
  const pointer = (e: MouseEvent): { screen: Point; world: Point } => {
    const box = canvas.getBoundingClientRect();
    const screen = { x: e.clientX - box.left, y: e.clientY - box.top };
    return { screen, world: toWorld(screen, host.vp) };
  };
  const step = (next: { tool: Tool; effect: Effect }): void => {
    host.tool = next.tool;
    host.apply(next.effect);
    host.invalidate();
  };
  canvas.addEventListener("pointerdown", (e) => {
    if (e.button !== 0 || !host.view) return;
    canvas.focus();
    canvas.setPointerCapture(e.pointerId);
    const { screen, world } = pointer(e);
    const hit = hitTest(host.view, host.layout, world, host.vp.scale);
    step(pointerDown(host.tool, hit, world, screen, { shift: e.shiftKey }, host.selected));
  });
  canvas.addEventListener("pointermove", (e) => {
    if (host.tool.kind === "idle" || !host.view) return;
    const { screen, world } = pointer(e);
    const hit = hitTest(host.view, host.layout, world, host.vp.scale);
    step(pointerMove(host.tool, hit, world, screen, host.selected));
  });
  canvas.addEventListener("pointerup", (e) => {
    if (host.tool.kind === "idle" || !host.view) return;
    const { world } = pointer(e);
    step(pointerUp(host.tool, hitTest(host.view, host.layout, world, host.vp.scale)));
  });
  canvas.addEventListener("pointercancel", () => host.cancel());
  canvas.addEventListener("contextmenu", (e) => {
    if (!host.view) return;
    e.preventDefault();
    const hit = hitTest(host.view, host.layout, pointer(e).world, host.vp.scale);
    host.menu(hit?.id ?? null, e.clientX, e.clientY);
  });
  canvas.addEventListener(
    "wheel",
    (e) => {
      e.preventDefault();
      const { screen } = pointer(e);
      if (e.ctrlKey || Math.abs(e.deltaY) >= Math.abs(e.deltaX))
        host.vp = zoomAt(host.vp, Math.exp(-e.deltaY * 0.0015), screen);
      else host.vp = pan(host.vp, -e.deltaX, 0);
      host.invalidate();
    },
    { passive: false },
  );
  minimap.addEventListener("pointerdown", (e) => {
    const box = minimap.getBoundingClientRect();
    const p = minimapToWorld(
      { x: e.clientX - box.left, y: e.clientY - box.top },
      { width: box.width, height: box.height, world: minimapWorld(host.layout.rects.values()) },
    );
    const { width, height } = host.size();
    host.vp = centreOn(host.vp, { x: p.x, y: p.y, w: 0, h: 0 }, width, height);
    host.invalidate();
  });
}

/** Keys run the registered actions, except while the user types in a field or a dialog. */
export function bindKeys(commands: Commands): void {
  document.addEventListener("keydown", (e) => {
    const target = e.target as HTMLElement | null;
    if (target && (target.closest("input, textarea, select, dialog") || target.isContentEditable))
      return;
    const a = actionForKey(e);
    if (!a) return;
    // Enter on a focused control (a button, a link, an issue in its list) is that control's
    if (
      CONTROL_KEYS.has(e.key) &&
      target?.closest("button, a, summary, [role=menuitem], .geon-menu, [tabindex]:not(canvas)")
    )
      return;
    e.preventDefault();
    a.run(commands);
  });
}
