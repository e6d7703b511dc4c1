// The parts of the drawn scene (render/canvas.ts's ``Scene``) that change with the document, the
// issues, the selection or who is present, not with the view: built once per change, reused by
// every frame of a pan or zoom.

import { declaredAxes, issuesByNode, type GraphView, type Issue, type LoomDocument } from "../model/document";
import { issueAxesByNode } from "../model/issues";
import { AXIS_PALETTE, type EdgeLabel, type Scene } from "./canvas";

export type SceneContent = Omit<Scene, "vp" | "size" | "tool" | "layout">;

/** A colour per user name (the same in every tab). */
export function personColor(user: string): string {
  let h = 0;
  for (const c of user) h = (h * 31 + c.charCodeAt(0)) >>> 0;
  return AXIS_PALETTE[h % AXIS_PALETTE.length]!;
}

export interface SceneInput {
  doc: LoomDocument;
  view: GraphView;
  issues: Issue[];
  /** Who is present (sync/protocol.ts's ``Presence``). */
  present: readonly { user: string; selection?: string[] }[];
  selected: readonly string[];
  found: readonly string[];
  /** The current plan's collectives by edge (ui/costs.ts ``edgeLabels``); none by default. */
  collectives?: ReadonlyMap<string, EdgeLabel>;
}

export function sceneContent({ doc, view, issues, present, selected, found, collectives }: SceneInput): SceneContent {
  return {
    view,
    selected: new Set(selected),
    issues: issuesByNode(issues),
    issueAxes: issueAxesByNode(doc, issues),
    axisOrder: [...declaredAxes(doc).keys()],
    // our own entry never changes after the snapshot (the server does not echo it), so it holds no selection
    presence: present.filter((p) => p.selection?.length).map((p) => ({ user: p.user, color: personColor(p.user), selection: p.selection ?? [] })),
    found: new Set(found),
    collectives: collectives ?? new Map(),
  };
}
