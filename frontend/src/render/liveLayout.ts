// The layout of the document as shown, kept across its changes: each new document gets a new
// view whose boxes keep their places at once where they can (``keptLayout``); ELK, in the layout
// worker when the page has one, places the rest, and only the latest request's answer counts.
// With grouping on (the editor), the view is the grouped one (render/groups.ts): collapsed
// groups are single boxes, and the collapsed set is view state kept here.

import { graphView, OPERATION, type GraphView, type LoomDocument } from "../model/document";
import { withFrames } from "./groupLayout";
import { groupedView, isGroupId, scopeTree, type Grouped, type ScopeTree } from "./groups";
import { gridLayout, keptLayout, layoutInput, type Layout, type LayoutInput } from "./layout";
import { LayoutClient } from "./layoutClient";
import type { Rect } from "./viewport";

export interface Grouping {
  /** The collapsed set a document opens with (its first showing with groups). */
  initial(tree: ScopeTree, operations: number): Set<string>;
}

export class LiveLayout {
  /** What is drawn: the whole view, or with grouping the boxes outside collapsed groups. */
  view: GraphView | null = null;
  layout: Layout = { rects: new Map() };
  /** The document's groups and the grouped view (null without grouping). */
  tree: ScopeTree | null = null;
  grouped: Grouped | null = null;
  collapsed: ReadonlySet<string> = new Set();
  private full: GraphView | null = null;
  private nodesOf: { layout: Layout; rects: Map<string, Rect> } | null = null;
  private started = false;
  private seq = 0;
  private readonly client: LayoutClient | null;

  /** ``placed`` runs when ELK's layout of the current view arrives. */
  constructor(
    private readonly placed: () => void,
    private readonly grouping?: Grouping,
  ) {
    let client: LayoutClient | null;
    try {
      client = new LayoutClient();
    } catch {
      client = null;
    }
    this.client = client;
  }

  /** Show ``doc``: its view, with the boxes that can keep their rects at once. */
  show(doc: LoomDocument): void {
    this.full = graphView(doc);
    if (this.grouping) {
      this.tree = scopeTree(doc);
      if (!this.started && this.tree.groups.size) {
        this.started = true;
        this.collapsed = this.grouping.initial(this.tree, doc.nodes.filter((n) => n.type === OPERATION).length);
      }
    }
    this.regroup();
  }

  /** Collapse exactly these groups (scope paths): the view changes, and ELK places what is new. */
  setCollapsed(collapsed: ReadonlySet<string>): void {
    this.collapsed = collapsed;
    if (this.full) this.regroup();
  }

  /** Whether every drawn box (and collapsed group) has its place. */
  get complete(): boolean {
    if (!this.view) return false;
    return this.view.boxes.every((b) => this.layout.rects.has(b.id)) && (this.grouped?.groups ?? []).every((g) => !g.collapsed || this.layout.rects.has(g.id));
  }

  /** The rects of nodes only (no group frames or boxes): what a selection rectangle selects. */
  nodeRects(): Map<string, Rect> {
    if (!this.grouped) return this.layout.rects;
    if (this.nodesOf?.layout !== this.layout) this.nodesOf = { layout: this.layout, rects: new Map([...this.layout.rects].filter(([id]) => !isGroupId(id))) };
    return this.nodesOf.rects;
  }

  private regroup(): void {
    const full = this.full!;
    const grouped = this.tree?.groups.size ? groupedView(full, this.tree, this.collapsed) : null;
    const view = grouped ? grouped.view : full;
    this.grouped = grouped;
    this.view = view;
    const kept = keptLayout(view, this.layout, grouped ?? undefined);
    this.layout = this.framed(kept.layout.rects);
    if (kept.complete) return;
    const seq = ++this.seq;
    const done = (layout: Layout | null): void => {
      if (!layout || seq !== this.seq || this.view !== view) return;
      this.layout = this.framed(layout.rects);
      this.placed();
    };
    const input: LayoutInput = layoutInput(view, grouped ?? undefined);
    if (this.client) void this.client.layout(input).then(done);
    else done({ rects: new Map(gridLayout(input)) });
  }

  private framed(rects: Map<string, Rect>): Layout {
    return { rects: this.grouped ? withFrames(rects, this.grouped) : rects };
  }
}
