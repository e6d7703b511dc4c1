// The scene a frame draws (render/canvas.ts): its shape, where its boxes and its view lie in the
// world, and the parts of it that change with the document, the issues, the selection or who is
// present, not with the view: built once per change, reused by every frame of a pan or zoom.

import {
  declaredAxes,
  issuesByNode,
  type GraphView,
  type Issue,
  type LoomDocument,
} from "../model/document";
import { issueAxesByNode } from "../model/issues";
import { dragOffset, type Tool } from "../tools/tools";
import { AXIS_PALETTE } from "./colors";
import type { SceneGroups } from "./groupPaint";
import type { Grouped } from "./groups";
import type { Layout } from "./layout";
import type { CanvasMarks } from "./marks";
import { toWorld, type Rect, type Viewport } from "./viewport";

export interface PresenceMark {
  user: string;
  color: string;
  selection: string[];
}

/** An edge that carries collectives under the document's current plan (ui/costs.ts). */
export interface EdgeLabel {
  text: string;
  /** Stroke width in screen pixels at scale 1, growing with the bytes moved. */
  width: number;
  bytes: number;
}

export interface Scene {
  view: GraphView;
  layout: Layout;
  vp: Viewport;
  size: { width: number; height: number };
  selected: ReadonlySet<string>;
  issues: ReadonlyMap<string, Issue[]>;
  /** Axis references named by the issues of each node: their chips are outlined in red. */
  issueAxes: ReadonlyMap<string, ReadonlySet<string>>;
  axisOrder: readonly string[];
  tool: Tool;
  presence: readonly PresenceMark[];
  found: ReadonlySet<string>;
  /** Edges carrying collectives, by "tensor->operation" (empty without a current plan). */
  collectives: ReadonlyMap<string, EdgeLabel>;
  /** Groups by name scope (render/groups.ts), when the graph has any. */
  groups?: SceneGroups;
  /** The review shown: unresolved threads per node, drawn as a pin at the box's top left. */
  pins?: ReadonlyMap<string, number>;
  /** The edge a row showed and the current plan's pipeline stages (render/marks.ts). */
  marks?: CanvasMarks;
}

export function rectOf(scene: Scene, id: string): Rect | undefined {
  const r = scene.layout.rects.get(id);
  if (!r) return undefined;
  const off = dragOffset(scene.tool, id);
  return off ? { x: r.x + off.x, y: r.y + off.y, w: r.w, h: r.h } : r;
}

export function visibleWorld(scene: Scene): Rect {
  const a = toWorld({ x: 0, y: 0 }, scene.vp);
  const b = toWorld({ x: scene.size.width, y: scene.size.height }, scene.vp);
  return { x: a.x - 20, y: a.y - 20, w: b.x - a.x + 40, h: b.y - a.y + 40 };
}

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
