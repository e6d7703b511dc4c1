// What a step of the pointer tool (tools/tools.ts) does, as an action: the selection it sets,
// the edit it builds (a move, a connection) or the view it pans to. Pure: the editor applies
// the outcome (an edit goes through ``perform``, so it is one undo step).

import { moveNodes } from "../model/author";
import { connectInput } from "../model/authorOperations";
import type { LoomDocument, Point } from "../model/document";
import type { EditOp } from "../model/edits";
import { intersects, pan, type Rect, type Viewport } from "../render/viewport";
import type { Effect } from "../tools/tools";

export type Outcome =
  | { kind: "select"; ids: string[] }
  | { kind: "edit"; name: string; build: (doc: LoomDocument) => EditOp[] }
  | { kind: "view"; vp: Viewport }
  | { kind: "none" };

/** The UI state an effect reads. */
export interface EffectContext {
  selected: readonly string[];
  rects: ReadonlyMap<string, Rect>;
  vp: Viewport;
}

export function effectOutcome(effect: Effect, ui: EffectContext): Outcome {
  switch (effect.type) {
    case "select": {
      if (!effect.additive) return { kind: "select", ids: effect.ids };
      const id = effect.ids[0]!;
      return {
        kind: "select",
        ids: ui.selected.includes(id) ? ui.selected.filter((s) => s !== id) : [...ui.selected, id],
      };
    }
    case "selectRect": {
      const r = {
        x: Math.min(effect.from.x, effect.to.x),
        y: Math.min(effect.from.y, effect.to.y),
        w: Math.abs(effect.to.x - effect.from.x),
        h: Math.abs(effect.to.y - effect.from.y),
      };
      const inside = [...ui.rects].filter(([, b]) => intersects(b, r)).map(([id]) => id);
      return { kind: "select", ids: effect.additive ? [...ui.selected, ...inside] : inside };
    }
    case "move": {
      const positions = new Map<string, Point>();
      for (const id of effect.ids) {
        const r = ui.rects.get(id);
        if (r) positions.set(id, { x: r.x + effect.delta.x, y: r.y + effect.delta.y });
      }
      return {
        kind: "edit",
        name: effect.ids.length === 1 ? "move" : `move ${effect.ids.length}`,
        build: (doc) => moveNodes(doc, positions),
      };
    }
    case "connect":
      return {
        kind: "edit",
        name: "connect",
        build: (doc) => connectInput(doc, effect.from, effect.to),
      };
    case "pan":
      return { kind: "view", vp: pan(ui.vp, effect.dx, effect.dy) };
    case "none":
      return { kind: "none" };
  }
}
