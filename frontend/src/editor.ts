// The editor: wires the panels (editorPanels.ts), the canvas and the tools to the controller
// (sync/controller.ts: the session, history and server messages). It owns the UI state
// (selection, viewport, tool, layout) and runs every user command through ``perform``: an action
// builds the ops from the shown document (model/), and the controller sends them as one edit and
// records one undo step. Drawing happens in render/, once per animation frame, from what is here.

import { action, type Commands } from "./actions/actions";
import { effectOutcome } from "./actions/effects";
import { deleteAction, pasteAction, relayoutAction, type Build, type Seen } from "./actions/edits";
import { AuthorError } from "./model/author";
import { copyNodes, type Clip } from "./model/clipboard";
import { searchNodes, type GraphView, type LoomDocument } from "./model/document";
import { EditError } from "./model/edits";
import { anchorNode, type Anchor, type ReviewSummary } from "./model/reviews";
import type { EditorState } from "./model/state";
import type { EdgeLabel, Scene } from "./render/scene";
import { isLarge } from "./render/groups";
import { LiveLayout } from "./render/liveLayout";
import { Painter } from "./render/painter";
import { revealing } from "./render/placement";
import { sceneContent, type SceneContent } from "./render/scene";
import { bounds, centreOn, fit, zoomAt, type Viewport } from "./render/viewport";
import { Controller } from "./sync/controller";
import { createEditorPanels, updatePanels, type EditorPanels } from "./editorPanels";
import { cancel, idle, type Effect, type Tool } from "./tools/tools";
import { bindCanvas, bindKeys } from "./ui/input";
import { GroupControls } from "./ui/groupControls";
import { el } from "./ui/dom";
import { createContextMenu } from "./ui/help";
import { showNodeMenu } from "./ui/nodeMenu";
import { createToast } from "./ui/toast";
import { showUnread, type ReviewsPanel } from "./ui/reviews";

export interface EditorOptions {
  wsPath: string;
  csrf: string;
  user: string;
  /** The graph's id (for the REST endpoints: runs, plans, diagrams). */
  graphId?: string;
  /** No websocket: documents come from ``loadDocument`` (the benchmark page). */
  offline: boolean;
}

export class Editor implements Commands {
  readonly sync: Controller;
  /** What the page adds to the editor (main.ts: help, history, explain; ``changed``: the shown document changed). */
  readonly extras: {
    help?: () => void;
    history?: () => void;
    explain?: (id: string) => void;
    changed?: () => void;
  } = {};
  private readonly contextMenu = createContextMenu();
  tool: Tool = idle();
  selected: string[] = [];
  vp: Viewport = { scale: 1, dx: 0, dy: 0 };
  found: string[] = [];
  draws = 0;
  lastPaintMs = 0;
  private foundAt = -1;
  private clip: Clip | null = null;
  private shownDoc: LoomDocument | null = null;
  private fitted = false;
  /** The shown document's view (groups collapsed: ui/groupControls.ts) and layout. */
  readonly live = new LiveLayout(
    () => {
      if (!this.fitted) {
        this.fitted = true;
        this.zoomToFit();
      }
      this.groups.placed();
      this.invalidate();
    },
    { initial: (tree, operations) => this.groups.initial(tree, operations) },
  );
  readonly groups: GroupControls;
  /** The parts of the scene that change with the document, selection or status (not with the view). */
  cached: SceneContent | null = null;
  /** The edges carrying collectives under the document's current plan (drawn on the canvas). */
  collectives: ReadonlyMap<string, EdgeLabel> = new Map();
  private panelsDirty = true;
  private holdPanels = false;
  private readonly painter: Painter;
  readonly toast = createToast();
  /** The panels around the canvas (editorPanels.ts). */
  private readonly panels: EditorPanels;
  /** The Reviews panel (null offline: the benchmark page has no server). */
  readonly reviews: ReviewsPanel | null = null;
  /** The operation whose projection window was opened last (the window may be closed since). */
  projectionOp: string | null = null;

  constructor(
    readonly root: HTMLElement,
    readonly options: EditorOptions,
  ) {
    this.sync = new Controller(
      {
        changed: () => this.refresh(),
        ticked: () => {
          this.panelsDirty = true;
          this.invalidate();
        },
        flash: (message) => this.flash(message),
        plansChanged: () => this.panels.shardsPanel.reloadPlans(),
        planCost: (cost) => this.panels.shardsPanel.livePlanCost(cost),
        reviewChanged: (event, review) =>
          this.reviews?.event(event, review as unknown as ReviewSummary),
        notified: (notification, unread) => (showUnread(unread), this.flash(notification.text)),
        selection: () => this.selected,
      },
      options.offline,
    );
    const canvas = el("canvas", {
      class: "geon-canvas",
      tabindex: "0",
      "aria-label": "graph canvas",
    });
    const minimap = el("canvas", { class: "geon-minimap", "aria-label": "minimap" });
    this.painter = new Painter(canvas, minimap, () => this.paint());
    this.groups = new GroupControls(this, canvas, options.graphId, this.contextMenu);
    this.panels = createEditorPanels(this, canvas, minimap);
    this.reviews = this.panels.reviews;
    bindCanvas(canvas, minimap, this);
    bindKeys(this);
    if (!options.offline) this.sync.connect(options.wsPath);
    this.refresh();
  }

  get view(): GraphView | null {
    return this.live.view;
  }

  get layout(): LiveLayout["layout"] {
    return this.live.layout;
  }

  /** The canvas's size in CSS pixels. */
  size(): { width: number; height: number } {
    return this.painter.size();
  }

  /** Offline use (the benchmark page): show a document as if the server had sent it. */
  loadDocument(doc: LoomDocument): void {
    this.fitted = false;
    this.sync.loadDocument(doc); // shown through the controller's ``changed``
  }

  // --- performing user actions --------------------------------------------------------------

  /** Run one user action: ``build`` returns its ops from the shown document; they are shown, sent as one edit and recorded as one undo step. Returns an error message or null. */
  perform(name: string, build: Build): string | null {
    const doc = this.sync.session.document;
    if (!doc) return "the graph has not loaded yet";
    const readOnly = this.sync.readOnly();
    if (readOnly) {
      this.flash(readOnly);
      return readOnly;
    }
    try {
      const built = build(doc);
      const { ops, select } = Array.isArray(built) ? { ops: built, select: null } : built;
      if (!ops.length) return null;
      this.sync.commit(name, ops);
      this.refresh();
      this.ensureVisible(ops.flatMap((op) => (op.op === "add_node" ? [op.node.id] : [])));
      if (select) this.setSelection(select);
      this.flash("");
      this.refresh();
      return null;
    } catch (e) {
      if (e instanceof AuthorError || e instanceof EditError) {
        this.flash(e.message);
        return e.message;
      }
      throw e;
    }
  }

  undo(): void {
    this.sync.undo();
  }

  redo(): void {
    this.sync.redo();
  }

  deleteSelection(): void {
    if (!this.selected.length) return;
    this.perform(`delete ${this.selected.length}`, deleteAction(this.seen()));
    this.setSelection([]);
  }

  copy(): void {
    const doc = this.sync.session.document;
    if (!doc || !this.selected.length) return;
    this.clip = copyNodes(doc, this.selected);
    this.flash(`copied ${this.clip.nodes.length} node${this.clip.nodes.length === 1 ? "" : "s"}`);
  }

  paste(): void {
    if (this.clip) this.perform("paste", pasteAction(this.clip, this.seen()));
  }

  selectAll(): void {
    this.setSelection(this.view?.boxes.map((b) => b.id) ?? []);
  }

  zoomToFit(): void {
    const { width, height } = this.size();
    this.vp = fit(bounds(this.layout.rects.values()), width, height);
    this.invalidate();
  }

  zoomBy(factor: number): void {
    const { width, height } = this.size();
    this.vp = zoomAt(this.vp, factor, { x: width / 2, y: height / 2 });
    this.invalidate();
  }

  relayout(): void {
    if (!this.sync.session.document) return;
    this.perform("lay out", relayoutAction(this.seen()));
    this.fitted = false;
  }

  /** The kernels the operation picker lists first (a puzzle's allowed kernels). */
  preferKernels = (kernels: readonly string[]): void => this.panels.palette.prefer(kernels);

  openPalette(): void {
    this.panels.palette.open();
  }

  newTensor(): void {
    const doc = this.sync.session.document;
    if (doc) this.panels.tensorDialog.open(doc);
  }

  newAxis(): void {
    this.root.querySelector<HTMLInputElement>(".geon-axis-name")?.focus();
  }

  focusSearch(): void {
    this.panels.toolbar.search.focus();
    this.panels.toolbar.search.select();
  }

  cancel(): void {
    const step = cancel(this.tool);
    this.tool = step.tool;
    this.apply(step.effect);
    this.invalidate();
  }

  runAction(name: string): void {
    action(name).run(this);
  }

  help(): void {
    this.extras.help?.();
  }

  history(): void {
    this.extras.history?.();
  }

  /** The right-click menu of a node (selected first) or of the canvas; editing is disabled, with the reason, for a read-only role. */
  menu(id: string | null, x: number, y: number): void {
    showNodeMenu(this.contextMenu, this, this.sync.readOnly() ?? undefined, id, x, y);
  }

  /** What the user sees, for the actions that read it. */
  seen(): Seen {
    return { selected: this.selected, rects: this.layout.rects, vp: this.vp, size: this.size() };
  }

  /** Bring nodes the user just made into view. */
  private ensureVisible(ids: string[]): void {
    const vp = revealing(this.layout.rects, ids, this.vp, this.size());
    if (!vp) return;
    this.vp = vp;
    this.invalidate();
  }

  /** Open the projection window of an operation (the inspector's "Index space & projections"). */
  openProjection(id: string): void {
    this.projectionOp = id;
    this.panels.projection.update(this.sync.session.document, this.selected);
    this.panels.projection.open(id);
    requestAnimationFrame(() => requestAnimationFrame(() => this.ensureVisible([id]))); // once the canvas made room
  }

  /** A review thread's "Show": select and centre the node it is pinned to, or where it was when it has been removed. */
  showAnchor(anchor: Anchor, lastPosition: { x: number; y: number } | null): void {
    const id = anchorNode(anchor);
    if (id !== null && (this.layout.rects.has(id) || this.live.grouped?.hiddenIn.has(id)))
      return this.jumpTo(id);
    if (id !== null && lastPosition) {
      const { width, height } = this.size();
      this.vp = centreOn(this.vp, { ...lastPosition, w: 0, h: 0 }, width, height);
      this.invalidate();
    }
    this.flash(
      id === null
        ? "this thread is pinned to an axis, not to a node on the canvas"
        : "the node this thread is pinned to was removed; this is where it was",
    );
  }

  /** Select and centre a node (revealed first when it is in a collapsed group). */
  jumpTo(id: string): void {
    if (this.groups.reveal(id)) return this.setSelection([id]);
    const r = this.layout.rects.get(id);
    this.setSelection([id]);
    if (r) {
      const { width, height } = this.size();
      this.vp = centreOn(
        this.vp.scale < 0.6 ? { ...this.vp, scale: 1 } : this.vp,
        r,
        width,
        height,
      );
    }
    this.invalidate();
  }

  search(text: string, next: boolean): void {
    const doc = this.sync.session.document;
    this.found = doc ? searchNodes(doc, text) : [];
    if (next && this.found.length) {
      this.foundAt = (this.foundAt + 1) % this.found.length;
      this.jumpTo(this.found[this.foundAt]!);
    } else this.foundAt = -1;
    this.refresh();
  }

  setSelection(ids: string[]): void {
    this.selected = [...new Set(ids)];
    if (ids.length) this.groups.focus = null;
    this.sync.announceSelection(this.selected);
    this.refresh();
  }

  /** What a step of the current tool asks for (tools/tools.ts), done. */
  apply(effect: Effect): void {
    const outcome = effectOutcome(effect, {
      selected: this.selected,
      rects: this.live.nodeRects(),
      vp: this.vp,
    });
    if (outcome.kind === "select") this.setSelection(outcome.ids);
    else if (outcome.kind === "edit") this.perform(outcome.name, outcome.build);
    else if (outcome.kind === "view") this.vp = outcome.vp;
  }

  // --- status, layout, drawing ------------------------------------------------------------

  flash(message: string): void {
    this.toast.show(message);
  }

  /** The document changed (or the status): rebuild the view and layout, then draw. */
  refresh(): void {
    const doc = this.sync.session.document;
    if (doc !== this.shownDoc) {
      // a large graph just opened is drawn first, its panels a frame later (an import has many axes)
      this.holdPanels = !!doc && doc.id !== this.shownDoc?.id && isLarge(doc);
      if (this.holdPanels) setTimeout(() => this.releasePanels(), 1000); // in case no layout comes
      this.shownDoc = doc;
      if (doc) this.live.show(doc);
      this.groups.update();
      const alive = new Set(doc?.nodes.map((n) => n.id) ?? []);
      if (this.selected.some((id) => !alive.has(id)))
        this.selected = this.selected.filter((id) => alive.has(id));
      this.extras.changed?.();
    }
    this.cached = null;
    this.panelsDirty = true;
    this.invalidate();
  }

  invalidate(): void {
    this.painter.invalidate();
  }

  scene(): Scene | null {
    const doc = this.sync.session.document;
    if (!doc || !this.view) return null;
    if (!this.cached || this.cached.view !== this.view) {
      this.cached = sceneContent({
        doc,
        view: this.view,
        issues: this.sync.issues(),
        present: this.sync.session.present,
        selected: this.selected,
        found: this.found,
        collectives: this.collectives,
        grouped: this.live.grouped,
        groupFocus: this.groups.focus,
      });
    }
    return {
      ...this.cached,
      layout: this.layout,
      vp: this.vp,
      size: this.size(),
      tool: this.tool,
      pins: this.reviews?.pins(),
      marks: this.live.marks,
    };
  }

  /** Draw the canvas (and, after a change of state, the panels). A pan or zoom only redraws the canvas. */
  paint(): void {
    const t0 = performance.now();
    const scene = this.scene();
    if (scene && !this.fitted && this.layout.rects.size && this.live.complete) {
      const { width, height } = this.size();
      this.fitted = true;
      this.vp = fit(bounds(this.layout.rects.values()), width, height);
      scene.vp = this.vp;
    }
    const drawn = this.painter.paint(scene, this.cached);
    // the panels after the canvas: the graph shows first, the DOM follows in the same frame
    if (this.holdPanels && drawn && this.live.complete) this.releasePanels();
    else if (this.panelsDirty && !this.holdPanels) {
      this.panelsDirty = false;
      updatePanels(this, this.panels);
    }
    if (!drawn) return;
    this.draws += 1;
    this.lastPaintMs = performance.now() - t0;
    this.groups.painted(this.live.complete);
  }

  private releasePanels(): void {
    this.holdPanels = false;
    this.invalidate();
  }

  state(): EditorState {
    return this.sync.state();
  }
}
