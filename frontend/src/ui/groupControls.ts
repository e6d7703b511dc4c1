// Collapsing and expanding groups (issue 20; the model is render/groups.ts). On the canvas a click
// on a group's chevron toggles it, a click on a collapsed box or a frame's header selects the
// group and a double-click toggles it; a right-click on a group offers it, and on a node inside
// one its group. The registered actions (actions/actions.ts) toggle the selected group, or the
// group around the selected node (Enter, G), and collapse or expand them all (Shift+G, Shift+E, and
// the buttons over the canvas when the graph has groups). A node found by search or jumped to
// inside a collapsed group is revealed (the groups around it expand) and centred once the layout
// arrives. The collapsed set is view state: never sent, remembered per graph in this browser.

import { action, type GroupCommands } from "../actions/actions";
import type { GraphView } from "../model/document";
import { hitTest } from "../render/canvas";
import { hitGroup } from "../render/groupPaint";
import {
  defaultCollapsed,
  groupId,
  groupPath,
  isGroupId,
  revealing,
  type ScopeTree,
} from "../render/groups";
import type { Layout } from "../render/layout";
import type { LiveLayout } from "../render/liveLayout";
import {
  bounds,
  centreOn,
  fit,
  showRect,
  toScreen,
  toWorld,
  type Rect,
  type Viewport,
} from "../render/viewport";
import { button, el } from "./dom";
import type { ContextMenu, MenuItem } from "./help";
import { actionItem } from "./menus";

/** What the controls read and move (the editor). */
export interface GroupHost {
  readonly live: LiveLayout;
  vp: Viewport;
  readonly selected: string[];
  size(): { width: number; height: number };
  setSelection(ids: string[]): void;
  /** Rebuild the scene and draw. */
  refresh(): void;
}

/** What a browser test reads of the groups (``window.geonGroups``). */
export interface GroupTestApi {
  /** Each group drawn: path, title, collapsed, and where it is on the canvas (CSS px). */
  list(): {
    path: string;
    title: string;
    collapsed: boolean;
    x: number;
    y: number;
    w: number;
    h: number;
  }[];
  toggle(path: string): void;
  /** The collapsed group (its path) a node is hidden in, or null when it is drawn. */
  hiddenIn(id: string): string | null;
  focus(): string | null;
  /** When (performance.now()) the first paint with every drawn box in place ended, since the page opened or the groups last changed. */
  laidOutAt(): number | null;
  /** Whether the group opened last is drawn with its provisional layout, ELK's not yet in. */
  provisional(): boolean;
}

declare global {
  interface Window {
    geonGroups?: GroupTestApi;
  }
}

const STORE = "geon.groups.";

export class GroupControls implements GroupCommands {
  /** The group selected by a click (its id): Enter toggles it. */
  focus: string | null = null;
  readonly bar: HTMLElement;
  /** What to centre on once the next layout arrives: a group toggled, a node revealed, an edge's ends shown. */
  private target: readonly string[] = [];
  private laidOutAt: number | null = null;

  constructor(
    private readonly host: GroupHost,
    canvas: HTMLCanvasElement,
    private readonly graphId: string | undefined,
    private readonly menu: ContextMenu,
  ) {
    this.bar = el(
      "div",
      { class: "geon-groups-bar", hidden: "" },
      button("Collapse all", "Collapse every group to one box (Shift+G)", () => this.collapseAll()),
      button("Expand all", "Expand every group (Shift+E)", () => this.expandAll()),
    );
    this.bind(canvas);
    window.geonGroups = {
      list: () =>
        (host.live.grouped?.groups ?? []).flatMap((g) => {
          const r = host.live.layout.rects.get(g.id);
          return r
            ? [{ path: g.path, title: g.title, collapsed: g.collapsed, ...toScreen(r, host.vp) }]
            : [];
        }),
      toggle: (path) => this.toggle(path),
      hiddenIn: (id) => {
        const g = host.live.grouped?.hiddenIn.get(id);
        return g ? groupPath(g) : null;
      },
      focus: () => this.focus,
      laidOutAt: () => this.laidOutAt,
      provisional: () => host.live.provisional,
    };
  }

  private get tree(): ScopeTree | null {
    return this.host.live.tree;
  }

  /** The collapsed set a graph opens with: as this browser left it, else large graphs collapsed. */
  initial(tree: ScopeTree, operations: number): Set<string> {
    try {
      const kept = JSON.parse(localStorage.getItem(STORE + this.graphId) ?? "null") as unknown;
      if (this.graphId && Array.isArray(kept))
        return new Set(
          kept.filter((p): p is string => typeof p === "string" && tree.groups.has(p)),
        );
    } catch {
      /* a bad entry: the default */
    }
    return defaultCollapsed(tree, operations);
  }

  /** A paint ended (``complete``: with every drawn box in place). */
  painted(complete: boolean): void {
    if (complete) this.laidOutAt ??= performance.now();
  }

  /** Show the bar when the graph has groups. */
  update(): void {
    this.bar.hidden = !this.tree?.groups.size;
  }

  /** Collapse exactly ``next``; centre on ``target`` (a group, a node, or an edge's ends) once laid out. */
  set(next: Set<string>, target: string | readonly string[] | null = null): void {
    this.target = target === null ? [] : typeof target === "string" ? [target] : target;
    this.laidOutAt = null;
    this.host.live.setCollapsed(next);
    if (this.graphId) {
      try {
        localStorage.setItem(STORE + this.graphId, JSON.stringify([...next]));
      } catch {
        /* storage full or off: the state lasts for this page */
      }
    }
    this.host.refresh();
  }

  toggle(path: string): void {
    if (!this.tree?.groups.has(path)) return;
    const next = new Set(this.host.live.collapsed);
    if (!next.delete(path)) next.add(path);
    this.select(groupId(path));
    this.set(next, groupId(path));
  }

  /** Select a group (null: none); a node selection is cleared. */
  select(id: string | null): void {
    if (id) this.host.setSelection([]);
    this.focus = id;
    this.host.refresh();
  }

  /** Expand the groups around a hidden node and centre on it once laid out; false when it is drawn already. */
  reveal(id: string): boolean {
    const tree = this.tree;
    if (!tree || !this.host.live.grouped?.hiddenIn.has(id)) return false;
    this.set(revealing(tree, id, this.host.live.collapsed), id);
    return true;
  }

  /** Centre on ``ids`` (an edge's ends) again when the layout on its way arrives: their boxes may move. */
  aim(ids: readonly string[]): void {
    this.target = ids;
  }

  /** A layout arrived: centre on what was toggled, revealed or shown (fitting a group larger than the view). */
  placed(): void {
    const { rects } = this.host.live.layout;
    const held = this.target.flatMap((id) => [rects.get(id)].filter((r): r is Rect => !!r));
    if (!held.length) return;
    const { width, height } = this.host.size();
    const vp = this.host.vp;
    const [only] = this.target;
    if (this.target.length > 1) this.host.vp = showRect(vp, bounds(held), width, height);
    else if (isGroupId(only!)) {
      const whole = fit(held[0]!, width, height, 48);
      this.host.vp = whole.scale < vp.scale ? whole : centreOn(vp, held[0]!, width, height);
    } else
      this.host.vp = centreOn(vp.scale < 0.6 ? { ...vp, scale: 1 } : vp, held[0]!, width, height);
    // a group drawn with a provisional layout is centred on again when ELK's arrives
    if (!this.host.live.provisional) this.target = [];
  }

  toggleSelected(): boolean {
    if (this.focus) {
      this.toggle(groupPath(this.focus));
      return true;
    }
    const around = this.host.selected.length
      ? this.tree?.of.get(this.host.selected[0]!)
      : undefined;
    if (!around) return false;
    this.toggle(around);
    return true;
  }

  collapseAll(): void {
    if (this.tree?.groups.size) this.set(new Set(this.tree.groups.keys()));
  }

  expandAll(): void {
    if (this.tree?.groups.size) this.set(new Set());
  }

  /** The right-click items for the group ``path`` (a frame or box), or around node ``id``; then
   * collapse and expand all. None when the graph has no groups. */
  menuFor(target: { path: string } | { id: string | null }): MenuItem[] {
    const tree = this.tree;
    if (!tree?.groups.size) return [];
    const path = "path" in target ? target.path : target.id ? tree.of.get(target.id) : undefined;
    const group = path ? tree.groups.get(path) : undefined;
    const own: MenuItem[] = [];
    if (path && group) {
      const collapsed = this.host.live.collapsed.has(path);
      const label = `${collapsed ? "Expand" : "Collapse"} group "${group.name}"`;
      own.push({ ...actionItem(action("toggleGroup"), () => this.toggle(path)), label });
    }
    return [
      ...own,
      actionItem(action("collapseAll"), () => this.collapseAll()),
      actionItem(action("expandAll"), () => this.expandAll()),
    ];
  }

  private bind(canvas: HTMLCanvasElement): void {
    const at = (
      e: MouseEvent,
    ): { view: GraphView; layout: Layout; world: { x: number; y: number } } | null => {
      const view = this.host.live.view;
      if (!view || !this.host.live.grouped) return null;
      const box = canvas.getBoundingClientRect();
      return {
        view,
        layout: this.host.live.layout,
        world: toWorld({ x: e.clientX - box.left, y: e.clientY - box.top }, this.host.vp),
      };
    };
    const hit = (e: MouseEvent) => {
      const p = at(e);
      if (!p || hitTest(p.view, p.layout, p.world, this.host.vp.scale)) return null;
      return hitGroup(this.host.live.grouped!.groups, p.layout, p.world) ?? "none";
    };
    let down = { x: 0, y: 0 };
    canvas.addEventListener("pointerdown", (e) => (down = { x: e.clientX, y: e.clientY }));
    canvas.addEventListener("click", (e) => {
      if (Math.hypot(e.clientX - down.x, e.clientY - down.y) > 4 || e.detail > 1) return;
      const g = hit(e);
      if (g === null) return;
      if (g === "none") {
        if (this.focus) this.select(null);
      } else if (g.zone === "chevron") this.toggle(g.path);
      else this.select(g.id);
    });
    canvas.addEventListener("dblclick", (e) => {
      const g = hit(e);
      if (g && g !== "none" && g.zone === "body") this.toggle(g.path);
    });
    // a right-click on a group's frame or box is the group's menu (the editor's is for nodes):
    // bound before the editor binds its own (ui/input.ts), so stopping it here keeps that out
    canvas.addEventListener("contextmenu", (e) => {
      const g = hit(e);
      if (!g || g === "none") return;
      e.preventDefault();
      e.stopImmediatePropagation();
      this.select(g.id);
      this.menu.show(e.clientX, e.clientY, this.menuFor({ path: g.path }));
    });
  }
}
