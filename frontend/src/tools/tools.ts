// Pointer interaction as explicit states. Each event moves the tool from one state to the next
// and may ask for one effect (select, move, connect, pan); the tool changes nothing itself. The
// canvas reads the state to draw previews: boxes being dragged, the wire being connected, the
// selection rectangle.

import type { Point } from "../model/document";

export type Zone = "body" | "handle";

export interface Hit {
  id: string;
  kind: "tensor" | "operation";
  zone: Zone;
}

export interface Mods {
  shift: boolean;
}

export type Tool =
  | { kind: "idle" }
  | { kind: "pressing"; hit: Hit; from: Point; screen: Point; mods: Mods }
  | { kind: "dragging"; ids: string[]; from: Point; delta: Point }
  | { kind: "connecting"; from: string; at: Point; over: string | null }
  | { kind: "panning"; last: Point }
  | { kind: "selecting"; from: Point; to: Point; additive: boolean };

export type Effect =
  | { type: "none" }
  | { type: "select"; ids: string[]; additive: boolean }
  | { type: "move"; ids: string[]; delta: Point }
  | { type: "connect"; from: string; to: string }
  | { type: "pan"; dx: number; dy: number }
  | { type: "selectRect"; from: Point; to: Point; additive: boolean };

export interface Step {
  tool: Tool;
  effect: Effect;
}

const NONE: Effect = { type: "none" };
/** How far (CSS pixels) the pointer moves before a press becomes a drag. */
export const DRAG_SLOP = 4;

export const idle = (): Tool => ({ kind: "idle" });

/** ``world`` is the pointer in graph coordinates, ``screen`` in canvas pixels. */
export function pointerDown(
  tool: Tool,
  hit: Hit | null,
  world: Point,
  screen: Point,
  mods: Mods,
  selected: readonly string[],
): Step {
  if (tool.kind !== "idle") return { tool, effect: NONE };
  if (!hit) {
    if (mods.shift)
      return { tool: { kind: "selecting", from: world, to: world, additive: true }, effect: NONE };
    return { tool: { kind: "panning", last: screen }, effect: NONE };
  }
  if (hit.zone === "handle" && hit.kind === "tensor")
    return { tool: { kind: "connecting", from: hit.id, at: world, over: null }, effect: NONE };
  const effect: Effect =
    selected.includes(hit.id) && !mods.shift
      ? NONE
      : { type: "select", ids: [hit.id], additive: mods.shift };
  return { tool: { kind: "pressing", hit, from: world, screen, mods }, effect };
}

export function pointerMove(
  tool: Tool,
  hit: Hit | null,
  world: Point,
  screen: Point,
  selected: readonly string[],
): Step {
  switch (tool.kind) {
    case "pressing": {
      if (Math.hypot(screen.x - tool.screen.x, screen.y - tool.screen.y) < DRAG_SLOP)
        return { tool, effect: NONE };
      const ids = selected.includes(tool.hit.id) ? [...selected] : [tool.hit.id];
      return {
        tool: {
          kind: "dragging",
          ids,
          from: tool.from,
          delta: { x: world.x - tool.from.x, y: world.y - tool.from.y },
        },
        effect: NONE,
      };
    }
    case "dragging":
      return {
        tool: { ...tool, delta: { x: world.x - tool.from.x, y: world.y - tool.from.y } },
        effect: NONE,
      };
    case "connecting":
      return {
        tool: { ...tool, at: world, over: hit && hit.kind === "operation" ? hit.id : null },
        effect: NONE,
      };
    case "panning":
      return {
        tool: { kind: "panning", last: screen },
        effect: { type: "pan", dx: screen.x - tool.last.x, dy: screen.y - tool.last.y },
      };
    case "selecting":
      return { tool: { ...tool, to: world }, effect: NONE };
    default:
      return { tool, effect: NONE };
  }
}

export function pointerUp(tool: Tool, hit: Hit | null): Step {
  switch (tool.kind) {
    case "dragging":
      return {
        tool: idle(),
        effect:
          tool.delta.x || tool.delta.y ? { type: "move", ids: tool.ids, delta: tool.delta } : NONE,
      };
    case "connecting": {
      const target = hit && hit.kind === "operation" ? hit.id : tool.over;
      return {
        tool: idle(),
        effect: target ? { type: "connect", from: tool.from, to: target } : NONE,
      };
    }
    case "selecting":
      return {
        tool: idle(),
        effect: { type: "selectRect", from: tool.from, to: tool.to, additive: tool.additive },
      };
    case "panning":
      return { tool: idle(), effect: NONE };
    case "pressing":
      return { tool: idle(), effect: NONE };
    default:
      return { tool, effect: NONE };
  }
}

/** Escape: whatever was under way is dropped, nothing is sent (a drag returns to where it began). */
export function cancel(tool: Tool): Step {
  return {
    tool: idle(),
    effect: tool.kind === "idle" ? { type: "select", ids: [], additive: false } : NONE,
  };
}

/** Where a box is drawn while the tool is dragging it. */
export function dragOffset(tool: Tool, id: string): Point | null {
  return tool.kind === "dragging" && tool.ids.includes(id) ? tool.delta : null;
}
