// The layout of the document as shown, kept across its changes: each new document gets a new
// view whose boxes keep their places at once where they can (``keptLayout``); ELK, in the layout
// worker when the page has one, places the rest, and only the latest request's answer counts.
// With grouping on (the editor), the view is the grouped one (render/groups.ts): collapsed
// groups are single boxes, and the collapsed set is view state kept here.

import { graphView, OPERATION, type GraphView, type LoomDocument } from "../model/document";
import { quickLevels, withFrames } from "./groupLayout";
import {
  groupedView,
  groupId,
  isGroupId,
  scopeTree,
  within,
  type Grouped,
  type GroupShape,
  type ScopeTree,
} from "./groups";
import { CanvasMarks } from "./marks";
import {
  blockInput,
  BlockCache,
  changedGroup,
  closedLayout,
  openedLayout,
  placedBlock,
  type Block,
} from "./incremental";
import { gridLayout, keptLayout, layoutInput, type Layout, type LayoutInput } from "./layout";
import { LayoutClient } from "./layoutClient";
import type { Rect } from "./viewport";

export interface Grouping {
  /** The collapsed set a document opens with (its first showing with groups). */
  initial(tree: ScopeTree, operations: number): Set<string>;
}

/** How many shapes of collapsed groups are laid out ahead (``LiveLayout.warm``). */
const WARMED = 4;
const WARM_AFTER_MS = 250;

export class LiveLayout {
  /** What is drawn: the whole view, or with grouping the boxes outside collapsed groups. */
  view: GraphView | null = null;
  layout: Layout = { rects: new Map() };
  /** The document's groups and the grouped view (null without grouping). */
  tree: ScopeTree | null = null;
  grouped: Grouped | null = null;
  collapsed: ReadonlySet<string> = new Set();
  /** What is drawn over the layout: the edge a row showed, the plan's stages (render/marks.ts). */
  readonly marks = new CanvasMarks();
  private full: GraphView | null = null;
  private nodesOf: { layout: Layout; rects: Map<string, Rect> } | null = null;
  /** ``complete`` of the last view and layout (asked several times a frame). */
  private completeOf: { view: GraphView; layout: Layout; value: boolean } | null = null;
  private started = false;
  private seq = 0;
  private readonly client: LayoutClient | null;
  /** Opened blocks by shape: a group shaped like one laid out before opens with no layout. */
  private readonly blocks = new BlockCache();
  /** Whether the group opened last is drawn with its provisional layout (ELK's not yet in). */
  provisional = false;

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
        this.collapsed = this.grouping.initial(
          this.tree,
          doc.nodes.filter((n) => n.type === OPERATION).length,
        );
      }
    }
    this.regroup();
  }

  /** Collapse exactly these groups (scope paths): the view changes, and ELK places what is new. */
  setCollapsed(collapsed: ReadonlySet<string>): void {
    const was = this.collapsed;
    const before = this.grouped;
    this.collapsed = collapsed;
    if (!this.full) return;
    const rects = this.layout.rects;
    const complete = this.complete;
    this.regroup(complete && before ? changedGroup(before, was, collapsed) : null, rects, before);
  }

  /** Whether every drawn box (and collapsed group) has its place. */
  get complete(): boolean {
    if (!this.view) return false;
    const { view, layout } = this;
    if (this.completeOf?.view === view && this.completeOf.layout === layout)
      return this.completeOf.value;
    const value =
      view.boxes.every((b) => layout.rects.has(b.id)) &&
      (this.grouped?.groups ?? []).every((g) => !g.collapsed || layout.rects.has(g.id));
    this.completeOf = { view, layout, value };
    return value;
  }

  /** The rects of nodes only (no group frames or boxes): what a selection rectangle selects. */
  nodeRects(): Map<string, Rect> {
    if (!this.grouped) return this.layout.rects;
    if (this.nodesOf?.layout !== this.layout)
      this.nodesOf = {
        layout: this.layout,
        rects: new Map([...this.layout.rects].filter(([id]) => !isGroupId(id))),
      };
    return this.nodesOf.rects;
  }

  /** The view of the collapsed set; with ``change`` (one group opened or closed) only that group is laid out. */
  private regroup(
    change: ReturnType<typeof changedGroup> = null,
    rects?: Map<string, Rect>,
    before?: Grouped | null,
  ): void {
    const full = this.full!;
    const grouped = this.tree?.groups.size ? groupedView(full, this.tree, this.collapsed) : null;
    const view = grouped ? grouped.view : full;
    this.provisional = false;
    this.grouped = grouped;
    this.view = view;
    const at = change ? rects?.get(change.group.id) : undefined;
    if (change && at && rects && before && grouped) {
      if (!change.opened) {
        this.layout = this.framed(
          keptLayout(view, { rects: closedLayout(rects, before, change.group, at) }, grouped).layout
            .rects,
        );
        this.placed();
        return;
      }
      if (this.open(change.group, at, rects, view, grouped)) return;
    }
    const kept = keptLayout(view, this.layout, grouped ?? undefined);
    this.layout = this.framed(kept.layout.rects);
    if (kept.complete) return;
    const seq = ++this.seq;
    const done = (layout: Layout | null): void => {
      if (!layout || seq !== this.seq || this.view !== view) return;
      this.layout = this.framed(layout.rects);
      this.placed();
      // after a moment: a click right after the first paint is not queued behind these
      if (grouped) setTimeout(() => this.warm(grouped), WARM_AFTER_MS);
    };
    const input: LayoutInput = layoutInput(view, grouped ?? undefined);
    if (this.client) void this.client.layout(input).then(done);
    else done({ rects: new Map(gridLayout(input)) });
  }

  /**
   * Open ``group`` where its box was: at once with the block of a group of the same shape laid
   * out before; else at once with a provisional layout (render/quickLayout.ts), and ELK's from
   * the worker when it arrives. Boxes outside the group make room as for any opening, from the
   * places they had before it opened, so closing it again puts them back either way.
   */
  private open(
    group: GroupShape,
    box: Rect,
    rects: Map<string, Rect>,
    view: GraphView,
    grouped: Grouped,
  ): boolean {
    const input = blockInput(layoutInput(view, grouped), group.path);
    // a node a Layout tag places stays there: such a group is laid out with the whole view
    if (input.boxes.some((b) => b.pinned)) return false;
    const seq = ++this.seq;
    const put = (block: Block | null, provisional = false): boolean => {
      if (!block || seq !== this.seq || this.view !== view) return false;
      this.layout = this.framed(openedLayout(rects, group, box, block.block, block.frame));
      this.provisional = provisional;
      this.placed();
      return true;
    };
    if (put(this.blocks.get(input))) return true;
    this.layout = this.framed(keptLayout(view, { rects }, grouped).layout.rects);
    let settled = false;
    const elk = (layout: Layout | null): void => {
      settled = true;
      const block = layout && placedBlock(layout.rects, group.id, grouped);
      if (block) this.blocks.set(input, block);
      // ELK failed: the provisional layout stays
      if (!put(block) && seq === this.seq) this.provisional = false;
    };
    if (!this.client) {
      elk({ rects: new Map(gridLayout(input)) });
      return true;
    }
    void quickLevels(input).then((quick) => {
      if (!settled) put(placedBlock(new Map(quick.rects), group.id, grouped), true);
    });
    void this.client.layout(input).then(elk);
    return true;
  }

  /**
   * In the worker's idle time, lay out ahead the blocks a click opens next: for a few collapsed
   * groups of different shapes, the group opened alone and opened with all it holds (its levels
   * are cached by shape, so one layer of a stack warms all of them).
   */
  private warm(grouped: Grouped): void {
    const { client, tree, full } = this;
    if (!client || !tree || !full || this.grouped !== grouped) return;
    // a group's shape as far as it shows without laying it out: what it holds, and how long the
    // titles of the boxes inside are (box widths follow them: "l9.x" and "l10.x" differ)
    const titles = new Map<string, number>();
    for (const b of full.boxes) {
      const g = grouped.hiddenIn.get(b.id);
      if (g) titles.set(g, (titles.get(g) ?? 0) + b.title.length);
    }
    const shapes = new Set<string>();
    const picked: string[] = [];
    for (const g of grouped.groups) {
      const group = tree.groups.get(g.path);
      if (!g.collapsed || !group?.children.length) continue;
      const shape = `${group.ops}/${group.children.length}/${group.members.length}/${titles.get(g.id) ?? 0}`;
      if (shapes.has(shape) || shapes.size >= WARMED) continue;
      shapes.add(shape);
      picked.push(g.path);
    }
    // each opened alone first (what a click opens), then with all it holds (Expand all)
    const alone = picked.map((path): [string, Set<string>] => [
      path,
      new Set([...this.collapsed].filter((p) => p !== path)),
    ]);
    const whole = picked.map((path): [string, Set<string>] => [
      path,
      new Set([...this.collapsed].filter((p) => !within(p, path))),
    ]);
    for (const [path, open] of [...alone, ...whole]) {
      const next = groupedView(full, tree, open);
      const input = blockInput(layoutInput(next.view, next), path);
      void client.warm(input).then((layout) => {
        const block = layout && placedBlock(layout.rects, groupId(path), next);
        if (block) this.blocks.set(input, block);
      });
    }
  }

  private framed(rects: Map<string, Rect>): Layout {
    return { rects: this.grouped ? withFrames(rects, this.grouped) : rects };
  }
}
