// The parts of the drawn scene (render/canvas.ts's ``Scene``) that change with the document, the
// issues, the selection or who is present, not with the view: built once per change, reused by
// every frame of a pan or zoom.

import {
  declaredAxes,
  issuesByNode,
  type GraphView,
  type Issue,
  type LoomDocument,
} from "../model/document";
import { issueAxesByNode } from "../model/issues";
import { AXIS_PALETTE, type EdgeLabel, type Scene } from "./canvas";
import type { SceneGroups } from "./groupPaint";
import type { Grouped } from "./groups";

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
  /** The grouped view the boxes come from (render/groups.ts), and the group clicked last. */
  grouped?: Grouped | null;
  groupFocus?: string | null;
}

/** The groups to draw, and which collapsed ones hold a search hit, a selected node or issues. */
function sceneGroups(
  grouped: Grouped,
  found: readonly string[],
  selected: readonly string[],
  issues: Issue[],
  focus: string | null,
): SceneGroups {
  const holding = (ids: Iterable<string>) =>
    new Set(
      [...ids].flatMap((id) => (grouped.hiddenIn.has(id) ? [grouped.hiddenIn.get(id)!] : [])),
    );
  return {
    shapes: grouped.groups,
    found: holding(found),
    selected: holding(selected),
    issues: holding(issues.flatMap((i) => i.nodeIds)),
    focus,
    bundled: grouped.view.edges.filter((e) => e.count > 1),
  };
}

export function sceneContent({
  doc,
  view,
  issues,
  present,
  selected,
  found,
  collectives,
  grouped,
  groupFocus,
}: SceneInput): SceneContent {
  return {
    ...(grouped?.groups.length
      ? { groups: sceneGroups(grouped, found, selected, issues, groupFocus ?? null) }
      : {}),
    view,
    selected: new Set(selected),
    issues: issuesByNode(issues),
    issueAxes: issueAxesByNode(doc, issues),
    axisOrder: [...declaredAxes(doc).keys()],
    // our own entry never changes after the snapshot (the server does not echo it), so it holds no selection
    presence: present
      .filter((p) => p.selection?.length)
      .map((p) => ({ user: p.user, color: personColor(p.user), selection: p.selection ?? [] })),
    found: new Set(found),
    collectives: collectives ?? new Map(),
  };
}
