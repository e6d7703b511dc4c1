// The editor: wires the session (document + edits in flight), history, tools, actions, panels
// and the canvas together. It owns the UI state (selection, viewport, tool) and runs every user
// command through ``perform``: build the ops from the document, send them as one edit, record
// one undo step. Drawing happens in render/, once per animation frame, from what is here.

import { ACTIONS, actionForKey, type Commands } from "./actions/actions";
import { ExpandedEdits } from "./history/expanded";
import { History } from "./history/history";
import {
  addOperation,
  addTensor,
  AuthorError,
  connectInput,
  copyNodes,
  declareAxis,
  deleteNodes,
  editAxis,
  inferOperation,
  moveNodes,
  pasteNodes,
  removeAxis,
  rederive,
  setTensorAxes,
  uuid,
  type Clip,
} from "./model/author";
import { declaredAxes, graphView, issueAxes, issuesByNode, LAYOUT, nodeById, OPERATION, searchNodes, selections, TENSOR, tensorAxes, type GraphView, type Issue, type LoomDocument, type Point } from "./model/document";
import { applyOps, EditError, invertOps, type EditOp } from "./model/edits";
import { commitOps, operationProjection } from "./model/projection";
import { applyRun, countIssues, initialState, READ_ONLY_ROLES, type EditorState, type LinkState, type RunInfo, type ServerMessage } from "./model/state";
import { AXIS_PALETTE, COLORS, drawMinimap, drawMinimapFrame, drawScene, hitTest, minimapToWorld, type Scene } from "./render/canvas";
import { boxSize, gridLayout, layoutInput, type Layout } from "./render/layout";
import { LayoutClient } from "./render/layoutClient";
import { bounds, centreOn, fit, intersects, pan, toScreen, toWorld, zoomAt, type Rect, type Viewport } from "./render/viewport";
import { Session } from "./sync/session";
import { backoffDelay } from "./sync/backoff";
import { GraphSocket, refusalMessage, socketUrl } from "./sync/socket";
import { cancel, idle, pointerDown, pointerMove, pointerUp, type Effect, type Tool } from "./tools/tools";
import { button, el } from "./ui/dom";
import { createAxesPanel, createInspector, createIssuesPanel, createPalette, createTensorDialog } from "./ui/panels";
import { createProjectionWindow } from "./ui/projection";
import { createShardsPanel, type ShardRequest } from "./ui/shards";
import { createDiagram } from "./ui/diagram";
import { createRunPanel, type RunView } from "./ui/runPanel";
import { createToolbar } from "./ui/toolbar";

export interface EditorOptions {
  wsPath: string;
  runsUrl: string;
  csrf: string;
  user: string;
  /** The graph's id (for the REST endpoints: diagrams). */
  graphId?: string;
  /** No websocket: documents come from ``loadDocument`` (the benchmark page). */
  offline: boolean;
}

/** Refusals that mean "not now" (the database is unavailable, too many edits at once): the edit is sent again later. */
const RETRYABLE: ReadonlySet<string> = new Set(["unavailable", "rate_limited"]);
/** The most ids a presence selection may carry (SELECTION_MAX in geon/graphs/protocol.py). */
const PRESENCE_SELECTION_MAX = 1000;

function plural(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? "" : "s"}`;
}

function personColor(user: string): string {
  let h = 0;
  for (const c of user) h = (h * 31 + c.charCodeAt(0)) >>> 0;
  return AXIS_PALETTE[h % AXIS_PALETTE.length]!;
}

export class Editor implements Commands {
  /** Its edit ids start with a random UUID of this page load (the server answers a reused id as a repeat). */
  readonly session = new Session(uuid());
  readonly history = new History();
  /** Sent edits the server expands (shards), recorded in the history when they come back applied. */
  private readonly expanded = new ExpandedEdits();
  tool: Tool = idle();
  selected: string[] = [];
  vp: Viewport = { scale: 1, dx: 0, dy: 0 };
  view: GraphView | null = null;
  layout: Layout = { rects: new Map() };
  found: string[] = [];
  draws = 0;
  lastPaintMs = 0;
  private foundAt = -1;
  private status: EditorState = initialState();
  private clip: Clip | null = null;
  private shownDoc: LoomDocument | null = null;
  private fitted = false;
  private frame = 0;
  private presenceSupported = true;
  private layoutClient: LayoutClient | null = null;
  private socket: GraphSocket | null = null;
  /** Between a (re)connect and its snapshot: nothing is sent until the snapshot says what the server has. */
  private awaitingSnapshot = true;
  /** What the server's last ``error`` frame said when it took our access away (a 4404 follows). */
  private accessRemoved: string | null = null;
  /** Ticks the reconnect countdown in the toolbar while waiting. */
  private countdown: ReturnType<typeof setInterval> | null = null;
  /** Edits the server could not take for now, in a row: the backoff's exponent before sending again. */
  private busyTries = 0;
  /** Nothing is sent before this time (``Date.now()`` ms) after the server said it could not take an edit now. */
  private holdUntil = 0;
  /** The name of the user action each sent edit belongs to (to say which edit the server dropped). */
  private readonly editNames = new WeakMap<EditOp[], string>();
  private readonly canvas = el("canvas", { class: "geon-canvas", tabindex: "0", "aria-label": "graph canvas" });
  private readonly minimap = el("canvas", { class: "geon-minimap", "aria-label": "minimap" });
  private readonly toast = el("div", { class: "geon-toast", role: "alert" });
  private readonly toolbar;
  private readonly axesPanel;
  private readonly inspector;
  private readonly shardsPanel;
  private readonly projection;
  private readonly diagram;
  private readonly runPanel;
  private readonly diagramTab;
  private readonly issuesPanel;
  private readonly palette;
  private readonly tensorDialog;
  private paletteAt: Point | null = null;

  constructor(
    readonly root: HTMLElement,
    readonly options: EditorOptions,
  ) {
    this.toolbar = createToolbar((name) => this.runAction(name), () => void this.requestRun(), (text, next) => this.search(text, next), () => this.socket?.retryNow());
    this.axesPanel = createAxesPanel({
      declare: (form) => this.perform(`declare axis ${form.name}`, (doc) => declareAxis(doc, form)),
      edit: (id, form) => this.perform(`edit axis ${form.name}`, (doc) => editAxis(doc, id, form)),
      remove: (id) => this.perform("delete axis", (doc) => removeAxis(doc, id)),
    });
    this.inspector = createInspector({
      applyTensor: (id, label, axes, dtype) =>
        this.perform("edit tensor", (doc) => {
          const node = nodeById(doc).get(id)!;
          const ops: EditOp[] = [];
          if ((node.label ?? "") !== label.trim()) ops.push({ op: "update_node", id, label: label.trim() || null });
          if (node.body.dtype !== dtype) ops.push({ op: "update_node", id, body: { dtype } });
          const now = applyOps(doc, ops);
          // a positional (loom) tensor keeps having no axes while the field stays empty
          const unchanged = tensorAxes(node) === null ? axes.length === 0 : JSON.stringify(tensorAxes(node)) === JSON.stringify(axes);
          if (!unchanged) ops.push(...setTensorAxes(now, id, axes));
          return ops;
        }),
      applyOperation: (id, label, params) =>
        this.perform("edit operation", (doc) => {
          const node = nodeById(doc).get(id)!;
          const ops: EditOp[] = [];
          if ((node.label ?? "") !== label.trim()) ops.push({ op: "update_node", id, label: label.trim() || null });
          if (JSON.stringify(node.body.params ?? null) !== JSON.stringify(params)) ops.push({ op: "update_node", id, body: { params } });
          const now = applyOps(doc, ops);
          const inputs = [...selections(nodeById(now).get(id)!.body.inputs).values()].flat().map((s) => s.tensorId);
          return [...ops, ...rederive(now, inputs.slice(0, 1))];
        }),
      openProjection: (id) => this.openProjection(id),
    });
    this.issuesPanel = createIssuesPanel((id) => this.jumpTo(id));
    this.shardsPanel = createShardsPanel({
      shard: (request) => this.shard(request),
      removeApplication: (id) => void this.perform("remove application", () => [{ op: "remove_node", id }]),
      select: (id) => this.setSelection([id]),
      plans: options.graphId && !options.offline
        ? {
            graphId: options.graphId,
            csrf: options.csrf,
            // a plan's shard and remove ops as one edit: the server checks, applies and broadcasts all or nothing
            // the server generates the plan (REST); its applied, with this id, is one undo step
            beginSwitch: (name) => {
              const editId = this.expectExpanded("plan", `switch to plan ${name}`);
              return editId === null ? "the graph has not loaded yet" : { editId, baseVersion: this.session.version! };
            },
            cancelSwitch: (editId) => this.expanded.refused(editId),
          }
        : undefined,
    });
    this.projection = createProjectionWindow({
      commit: (opId, drafts) =>
        this.perform("edit projection", (doc) => {
          const view = operationProjection(doc, opId);
          if (!view) throw new AuthorError(`operation "${opId}" no longer exists`);
          if (!view.custom) throw new AuthorError(`kernel "${view.kernel}" is in the catalogue: its projections are derived from the axes; expected a custom kernel`);
          const ops = commitOps(doc, view, drafts);
          if (!ops.length) throw new AuthorError("the projections are unchanged; edit a projection, offset or shape first");
          return ops;
        }),
    });
    this.palette = createPalette((kernel) => this.addOperationFromPalette(kernel));
    this.tensorDialog = createTensorDialog((label, axes, dtype) => this.perform(`add tensor ${label}`, (doc) => {
      const { ops, id } = addTensor(doc, { label, axes, dtype, at: this.freeSpot() });
      this.afterPerform = () => this.setSelection([id]);
      return ops;
    }));

    this.runPanel = createRunPanel({
      graphId: options.graphId ?? "",
      csrf: options.csrf,
      onRun: (run) => {
        this.status = applyRun(this.status, { type: "run", event: "queued", run: run as unknown as RunInfo });
        this.refresh();
      },
      onError: (message) => this.flash(message),
    });
    this.diagram = createDiagram(options.graphId ?? "", (message) => this.flash(message));
    this.diagramTab = button("Diagram", "Show the Graphviz diagram of this version (and download it)", () => this.toggleDiagram(), "geon-diagram-tab");
    this.toolbar.element.querySelector(".geon-act-zoomToFit")?.after(this.diagramTab);
    const stage = el("div", { class: "geon-stage" }, this.canvas, this.minimap, this.projection.element, this.toast, this.diagram.element);
    const left = el("aside", { class: "geon-side geon-left" }, this.axesPanel.element, this.inspector.element);
    const right = el("aside", { class: "geon-side geon-right" }, this.shardsPanel.element, this.issuesPanel.element, this.runPanel.element);
    root.append(this.toolbar.element, el("div", { class: "geon-main" }, left, stage, right), this.palette.element, this.tensorDialog.element);
    this.bindPointer();
    this.bindKeys();
    new ResizeObserver((entries) => {
      const box = entries[0]?.contentRect;
      if (box) this.canvasSize = { width: box.width, height: box.height };
      this.invalidate();
    }).observe(this.canvas);
    try {
      this.layoutClient = new LayoutClient();
    } catch {
      this.layoutClient = null;
    }
    if (!options.offline) this.connect();
    this.refresh();
  }

  // --- connection ------------------------------------------------------------------------

  private connect(): void {
    this.socket = new GraphSocket(socketUrl(this.options.wsPath, window.location), {
      onConnecting: (attempts) => this.setLink({ attempts, retryAt: null }, "connecting"),
      onOpen: () => {
        this.awaitingSnapshot = true;
        this.setLink({ retryAt: null }, "open");
      },
      onMessage: (msg) => this.receive(msg),
      onClose: (code, retryIn) => this.lineClosed(code, retryIn),
      onInvalid: (reason) => this.setStatus({ message: `ignored a message from the server: ${reason}` }),
    });
    this.socket.connect();
  }

  /**
   * The line closed: keep every unconfirmed edit and count down to the next try, or, when the
   * server refused us (signed out, no access), stop and say why.
   */
  private lineClosed(code: number, retryIn: number | null): void {
    this.session.lineLost();
    this.awaitingSnapshot = true;
    if (retryIn === null) {
      this.stopCountdown();
      this.setLink({ retryAt: null, lost: true, refused: { code, message: refusalMessage(code, this.accessRemoved) } }, "closed");
      return;
    }
    this.setLink({ retryAt: Date.now() + retryIn, lost: true }, "closed");
    this.countdown ??= setInterval(() => {
      if (this.status.link.retryAt === null) this.stopCountdown();
      else {
        // only the toolbar's countdown changes: no new scene
        this.panelsDirty = true;
        this.invalidate();
      }
    }, 250);
  }

  private stopCountdown(): void {
    if (this.countdown !== null) clearInterval(this.countdown);
    this.countdown = null;
  }

  private setLink(patch: Partial<LinkState>, connection?: EditorState["connection"]): void {
    this.setStatus({ link: { ...this.status.link, ...patch }, ...(connection ? { connection } : {}) });
  }

  /** Send the next unconfirmed edit when the line is open and none is awaited (edits go one at a time). */
  private flush(): void {
    if (this.options.offline || this.awaitingSnapshot || !this.socket?.isOpen || Date.now() < this.holdUntil) return;
    const msg = this.session.next();
    if (msg) this.socket.send(msg);
  }

  private receive(msg: ServerMessage): void {
    switch (msg.type) {
      case "snapshot": {
        // a snapshot after a reconnect (not the first, nor one that replaces the document on an open line)
        const reconnected = this.session.version !== null && this.awaitingSnapshot;
        const resend = this.session.snapshot(msg.document, msg.version, msg.issues, msg.present, msg.issueCounts ?? null);
        this.awaitingSnapshot = false;
        if (msg.role !== undefined) this.status = { ...this.status, role: msg.role };
        // the server forgot this client's selection with the old line
        if (reconnected && this.selected.length && this.presenceSupported) this.socket?.send({ type: "presence", selection: this.shownSelection() });
        this.expanded.clear();
        // the server answers an edit it already applied without applying it again
        if (reconnected && resend) this.flash(`reconnected: ${plural(resend, "unsaved edit")} sent again`);
        break;
      }
      case "applied": {
        const before = this.session.confirmed;
        const news = this.session.version === null || msg.version > this.session.version;
        const { mine, outOfSync } = this.session.applied(msg);
        if (mine) this.busyTries = 0;
        // out of sync: the snapshot that follows the reconnect says what the server has
        if (outOfSync) this.socket?.reconnect();
        else if (news) {
          // an edit the server expanded (a shard) is recorded now, inverted against the
          // document it was applied to; everyone else's edits never enter the history
          const entry = this.expanded.applied(msg, before);
          if (entry) this.history.record(entry);
        }
        break;
      }
      case "rejected": {
        if (RETRYABLE.has(msg.reason) && this.session.requeue(msg.id)) {
          // not refused, only not now: the edit stays, and is sent again after a backoff
          const wait = backoffDelay(this.busyTries++);
          this.holdUntil = Date.now() + wait;
          setTimeout(() => this.flush(), wait);
          this.flash(`${msg.message}; your edit is kept and is sent again in ${Math.ceil(wait / 1000)} s`);
          break;
        }
        const ops = this.session.rejected(msg);
        if (ops) this.history.forget(ops);
        this.expanded.refused(msg.id);
        const name = ops ? this.editNames.get(ops) : undefined;
        this.flash(`${name ? `your edit "${name}" was dropped: ` : ""}the server refused it (${msg.reason}): ${msg.message}`);
        break;
      }
      case "presence":
        this.session.presence(msg);
        break;
      case "run":
        this.status = applyRun(this.status, msg);
        break;
      case "access":
        this.status = { ...this.status, role: msg.role };
        break;
      case "error": {
        // an edit the server could not read at all is refused like a rejected one
        const ops = msg.id ? this.session.rejected({ type: "rejected", id: msg.id, reason: msg.error.code, message: msg.error.message, version: this.session.version ?? 1 }) : null;
        if (ops) this.history.forget(ops);
        this.expanded.refused(msg.id);
        if (msg.error.code === "access_removed") this.accessRemoved = msg.error.message;
        if (msg.error.code === "unknown_message_type" && msg.error.message.includes('"presence"')) this.presenceSupported = false;
        else this.flash(msg.error.message);
        break;
      }
      case "plans":
        this.shardsPanel.reloadPlans();
        break;
      case "pong":
        break;
    }
    this.flush();
    this.refresh();
  }

  /** Offline use (the benchmark page): show a document as if the server had sent it. */
  loadDocument(doc: LoomDocument): void {
    this.session.snapshot(doc, 1, [], []);
    this.fitted = false;
    this.refresh();
  }

  // --- performing user actions --------------------------------------------------------------

  private afterPerform: (() => void) | null = null;

  /** Run one user action: its ops are applied, sent as one edit and recorded as one undo step. Returns an error message or null. */
  perform(name: string, build: (doc: LoomDocument) => EditOp[]): string | null {
    const doc = this.session.document;
    if (!doc) return "the graph has not loaded yet";
    const readOnly = this.readOnly();
    if (readOnly) {
      this.flash(readOnly);
      return readOnly;
    }
    this.afterPerform = null;
    try {
      const ops = build(doc);
      if (!ops.length) return null;
      const inverse = invertOps(doc, ops);
      this.send(ops, name);
      this.history.record({ name, ops, inverse });
      this.refresh();
      this.ensureVisible(ops.flatMap((op) => (op.op === "add_node" ? [op.node.id] : [])));
      const after = this.afterPerform as (() => void) | null;
      if (after) after();
      this.flash("");
      this.refresh();
      return null;
    } catch (e) {
      if (e instanceof AuthorError || e instanceof EditError) {
        this.flash(e.message);
        return e.message;
      }
      throw e;
    } finally {
      this.afterPerform = null;
    }
  }

  /** Why this user may not edit (their role only lets them look), or null. */
  private readOnly(): string | null {
    const role = this.status.role;
    if (role === null || !READ_ONLY_ROLES.has(role)) return null;
    return `you are a ${role} on this graph, so edits are refused; an owner can make you an editor`;
  }

  /** Queue the ops of the user action ``name`` as one edit and send it when the line allows. */
  private send(ops: EditOp[], name: string): void {
    const id = this.session.edit(ops);
    this.editNames.set(ops, name);
    if (this.options.offline) this.session.applied({ type: "applied", id, version: (this.session.version ?? 0) + 1, ops, issues: this.session.issues });
    this.flush();
  }

  /**
   * Shard an operation: the websocket ``shard`` op, which the server expands into the new
   * Applications (the ``applied`` message carries them). It is not shown before the server
   * answers; the client cannot invert an op it does not expand, so it becomes an undo step when
   * the ``applied`` comes back (see ``ExpandedEdits``): undo restores the applications before it.
   */
  shard(request: ShardRequest): string | null {
    const readOnly = this.readOnly();
    if (readOnly) return readOnly;
    const id = this.expectExpanded("shard", "shard");
    if (id === null) return "the graph has not loaded yet";
    if (!this.socket!.isOpen) {
      this.expanded.refused(id);
      return "the connection is down; shard again once it is back";
    }
    this.socket!.send({ type: "edit", id, baseVersion: this.session.version, ops: [{ op: "shard", ...request }] });
    return null;
  }

  /**
   * The id of an edit the server expands (a shard, a plan's switch), waited for so that its
   * ``applied`` becomes one undo step named ``name``; null while the graph is not loaded.
   */
  private expectExpanded(prefix: string, name: string): string | null {
    if (!this.socket || this.session.version === null) return null;
    const id = this.session.newId(prefix);
    this.expanded.expect(id, name);
    return id;
  }

  undo(): void {
    const readOnly = this.readOnly();
    if (readOnly) return this.flash(readOnly);
    const entry = this.history.undo();
    if (!entry) return;
    try {
      this.send(entry.inverse, `undo ${entry.name}`);
    } catch (e) {
      this.history.forget(entry.ops);
      this.flash(`cannot undo "${entry.name}": ${(e as Error).message}`);
    }
    this.refresh();
  }

  redo(): void {
    const readOnly = this.readOnly();
    if (readOnly) return this.flash(readOnly);
    const entry = this.history.redo();
    if (!entry) return;
    try {
      this.send(entry.ops, `redo ${entry.name}`);
    } catch (e) {
      this.history.forget(entry.ops);
      this.flash(`cannot redo "${entry.name}": ${(e as Error).message}`);
    }
    this.refresh();
  }

  deleteSelection(): void {
    if (!this.selected.length) return;
    const ids = [...this.selected];
    this.perform(`delete ${ids.length}`, (doc) => deleteNodes(doc, ids));
    this.setSelection([]);
  }

  copy(): void {
    const doc = this.session.document;
    if (!doc || !this.selected.length) return;
    this.clip = copyNodes(doc, this.selected);
    this.flash(`copied ${this.clip.nodes.length} node${this.clip.nodes.length === 1 ? "" : "s"}`);
  }

  paste(): void {
    const clip = this.clip;
    if (!clip) return;
    this.perform("paste", (doc) => {
      // copies without a Layout tag get one next to where the original is drawn
      const placed: Clip = {
        nodes: clip.nodes.map((n) => {
          const r = this.layout.rects.get(n.id);
          return r && !n.tags?.[LAYOUT] ? { ...n, tags: { ...(n.tags ?? {}), [LAYOUT]: { x: r.x, y: r.y } } } : n;
        }),
      };
      const { ops, ids } = pasteNodes(doc, placed, { x: 40, y: 40 });
      this.afterPerform = () => this.setSelection(ids);
      return ops;
    });
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
    const doc = this.session.document;
    if (!doc) return;
    const ids = this.selected.length ? this.selected : doc.nodes.filter((n) => n.tags?.[LAYOUT]).map((n) => n.id);
    this.perform("lay out", (d) => ids.filter((id) => nodeById(d).get(id)?.tags?.[LAYOUT]).map((id) => ({ op: "update_node", id, tags: { [LAYOUT]: null } })));
    this.fitted = false;
  }

  openPalette(): void {
    this.paletteAt = null;
    this.palette.open();
  }

  newTensor(): void {
    const doc = this.session.document;
    if (doc) this.tensorDialog.open(doc);
  }

  newAxis(): void {
    this.root.querySelector<HTMLInputElement>(".geon-axis-name")?.focus();
  }

  focusSearch(): void {
    this.toolbar.search.focus();
    this.toolbar.search.select();
  }

  cancel(): void {
    const step = cancel(this.tool);
    this.tool = step.tool;
    this.apply(step.effect);
    this.invalidate();
  }

  runAction(name: string): void {
    const a = ACTIONS.find((x) => x.name === name);
    if (!a) throw new Error(`action "${name}" is not registered`);
    a.run(this);
  }

  private addOperationFromPalette(kernel: string): void {
    const doc = this.session.document;
    if (!doc) return;
    const tensors = this.selected.filter((id) => nodeById(doc).get(id)?.type === TENSOR);
    this.perform(`add ${kernel}`, (d) => {
      const at = this.paletteAt ?? this.spotRightOf(tensors) ?? this.freeSpot();
      const { ops, id } = addOperation(d, kernel, at, tensors);
      this.afterPerform = () => this.setSelection([id]);
      return ops;
    });
  }

  /** Where a new node goes: right of the given nodes, or the middle of the view, clear of others. */
  private spotRightOf(ids: string[]): Point | null {
    const rects = ids.map((id) => this.layout.rects.get(id)).filter((r): r is Rect => !!r);
    if (!rects.length) return null;
    const b = bounds(rects);
    return this.clear({ x: b.x + b.w + 70, y: b.y + b.h / 2 - 23 });
  }

  private freeSpot(): Point {
    const { width, height } = this.size();
    const c = toWorld({ x: width / 2, y: height / 2 }, this.vp);
    return this.clear({ x: c.x - 80, y: c.y - 30 });
  }

  private clear(p: Point): Point {
    const at = { ...p };
    for (let i = 0; i < 40; i++) {
      const probe = { x: at.x - 10, y: at.y - 10, w: 200, h: 80 };
      if (![...this.layout.rects.values()].some((r) => intersects(r, probe))) break;
      at.y += 90;
    }
    return at;
  }

  /** Bring nodes the user just made into view: fit everything if that stays readable, else centre the first. */
  private ensureVisible(ids: string[]): void {
    const { width, height } = this.size();
    const screen = { x: 0, y: 0, w: width, h: height };
    const out = ids.map((id) => this.layout.rects.get(id)).filter((r): r is Rect => !!r).filter((r) => {
      const s = toScreen(r, this.vp);
      return s.x < screen.x || s.y < screen.y || s.x + s.w > screen.w || s.y + s.h > screen.h;
    });
    if (!out.length) return;
    const all = fit(bounds(this.layout.rects.values()), width, height);
    this.vp = all.scale >= 0.55 ? all : centreOn(this.vp, out[0]!, width, height);
    this.invalidate();
  }

  /** Open the projection window of an operation (the inspector's "Index space & projections"). */
  openProjection(id: string): void {
    this.projection.update(this.session.document, this.selected);
    this.projection.open(id);
  }

  jumpTo(id: string): void {
    const r = this.layout.rects.get(id);
    this.setSelection([id]);
    if (r) {
      const { width, height } = this.size();
      this.vp = centreOn(this.vp.scale < 0.6 ? { ...this.vp, scale: 1 } : this.vp, r, width, height);
    }
    this.invalidate();
  }

  private search(text: string, next: boolean): void {
    const doc = this.session.document;
    this.found = doc ? searchNodes(doc, text) : [];
    if (next && this.found.length) {
      this.foundAt = (this.foundAt + 1) % this.found.length;
      this.jumpTo(this.found[this.foundAt]!);
    } else this.foundAt = -1;
    this.refresh();
  }

  setSelection(ids: string[]): void {
    this.selected = [...new Set(ids)];
    if (this.presenceSupported && this.socket && this.session.version !== null) {
      this.socket.send({ type: "presence", selection: this.shownSelection() });
    }
    this.refresh();
  }

  /** The part of the selection others see: the server takes at most PRESENCE_SELECTION_MAX ids
   * (geon/graphs/protocol.py), so a select-all on a big graph shows its first ones. */
  private shownSelection(): string[] {
    return this.selected.slice(0, PRESENCE_SELECTION_MAX);
  }

  // --- pointer and keys -----------------------------------------------------------------

  private pointer(e: PointerEvent | WheelEvent): { screen: Point; world: Point } {
    const box = this.canvas.getBoundingClientRect();
    const screen = { x: e.clientX - box.left, y: e.clientY - box.top };
    return { screen, world: toWorld(screen, this.vp) };
  }

  private bindPointer(): void {
    const c = this.canvas;
    c.addEventListener("pointerdown", (e) => {
      if (e.button !== 0 || !this.view) return;
      c.focus();
      c.setPointerCapture(e.pointerId);
      const { screen, world } = this.pointer(e);
      const hit = hitTest(this.view, this.layout, world, this.vp.scale);
      const step = pointerDown(this.tool, hit, world, screen, { shift: e.shiftKey }, this.selected);
      this.tool = step.tool;
      this.apply(step.effect);
      this.invalidate();
    });
    c.addEventListener("pointermove", (e) => {
      if (this.tool.kind === "idle" || !this.view) return;
      const { screen, world } = this.pointer(e);
      const hit = hitTest(this.view, this.layout, world, this.vp.scale);
      const step = pointerMove(this.tool, hit, world, screen, this.selected);
      this.tool = step.tool;
      this.apply(step.effect);
      this.invalidate();
    });
    const up = (e: PointerEvent): void => {
      if (this.tool.kind === "idle" || !this.view) return;
      const { world } = this.pointer(e);
      const hit = hitTest(this.view, this.layout, world, this.vp.scale);
      const step = pointerUp(this.tool, hit);
      this.tool = step.tool;
      this.apply(step.effect);
      this.invalidate();
    };
    c.addEventListener("pointerup", up);
    c.addEventListener("pointercancel", () => this.cancel());
    c.addEventListener(
      "wheel",
      (e) => {
        e.preventDefault();
        const { screen } = this.pointer(e);
        if (e.ctrlKey || Math.abs(e.deltaY) >= Math.abs(e.deltaX)) this.vp = zoomAt(this.vp, Math.exp(-e.deltaY * 0.0015), screen);
        else this.vp = pan(this.vp, -e.deltaX, 0);
        this.invalidate();
      },
      { passive: false },
    );
    this.minimap.addEventListener("pointerdown", (e) => {
      const box = this.minimap.getBoundingClientRect();
      const p = minimapToWorld({ x: e.clientX - box.left, y: e.clientY - box.top }, { width: box.width, height: box.height, world: this.minimapWorld() });
      const { width, height } = this.size();
      this.vp = centreOn(this.vp, { x: p.x, y: p.y, w: 0, h: 0 }, width, height);
      this.invalidate();
    });
  }

  private bindKeys(): void {
    document.addEventListener("keydown", (e) => {
      const target = e.target as HTMLElement | null;
      if (target && (target.closest("input, textarea, select, dialog") || target.isContentEditable)) return;
      const a = actionForKey(e);
      if (!a) return;
      e.preventDefault();
      a.run(this);
    });
  }

  private apply(effect: Effect): void {
    switch (effect.type) {
      case "select": {
        if (!effect.additive) this.setSelection(effect.ids);
        else {
          const id = effect.ids[0]!;
          this.setSelection(this.selected.includes(id) ? this.selected.filter((s) => s !== id) : [...this.selected, id]);
        }
        break;
      }
      case "selectRect": {
        const r = { x: Math.min(effect.from.x, effect.to.x), y: Math.min(effect.from.y, effect.to.y), w: Math.abs(effect.to.x - effect.from.x), h: Math.abs(effect.to.y - effect.from.y) };
        const inside = [...this.layout.rects].filter(([, b]) => intersects(b, r)).map(([id]) => id);
        this.setSelection(effect.additive ? [...this.selected, ...inside] : inside);
        break;
      }
      case "move": {
        const positions = new Map<string, Point>();
        for (const id of effect.ids) {
          const r = this.layout.rects.get(id);
          if (r) positions.set(id, { x: r.x + effect.delta.x, y: r.y + effect.delta.y });
        }
        this.perform(effect.ids.length === 1 ? "move" : `move ${effect.ids.length}`, (doc) => moveNodes(doc, positions));
        break;
      }
      case "connect":
        this.perform("connect", (doc) => connectInput(doc, effect.from, effect.to));
        break;
      case "pan":
        this.vp = pan(this.vp, effect.dx, effect.dy);
        break;
      case "none":
        break;
    }
  }

  // --- status, issues, drawing ----------------------------------------------------------

  private setStatus(patch: Partial<EditorState>): void {
    this.status = { ...this.status, ...patch };
    this.refresh();
  }

  private flash(message: string): void {
    this.toast.textContent = message;
    this.toast.dataset.shown = message ? "1" : "";
  }

  /**
   * The issues to show: the server's, plus while our edits are in flight, the axis errors the
   * client already predicts for operations the server has not re-checked yet.
   */
  issues(): Issue[] {
    const server = this.session.issues;
    const doc = this.session.document;
    if (!doc || !this.session.inFlight) return server;
    const flagged = new Set(server.filter((i) => i.constraint === "OperationAxesInference").flatMap((i) => i.nodeIds));
    const predicted: Issue[] = [];
    for (const n of doc.nodes) {
      if (n.type !== OPERATION || flagged.has(n.id)) continue;
      const inf = inferOperation(doc, n);
      if (inf.kind === "error" && inf.type === "AxisError") {
        predicted.push({ constraint: "OperationAxesInference", type: inf.type, severity: "error", summary: "predicted by the editor", message: inf.message, nodeIds: [n.id] });
      }
    }
    return [...server, ...predicted];
  }

  /** Axis references to outline per node: what an issue names, on the node and on an operation's inputs. */
  private issueAxesByNode(doc: LoomDocument, issues: Issue[]): Map<string, Set<string>> {
    const nodes = nodeById(doc);
    const out = new Map<string, Set<string>>();
    const add = (id: string, refs: string[]) => {
      const set = out.get(id) ?? new Set<string>();
      refs.forEach((r) => set.add(r));
      out.set(id, set);
    };
    for (const issue of issues) {
      const refs = issueAxes(issue);
      if (!refs.length) continue;
      for (const id of issue.nodeIds) {
        add(id, refs);
        const n = nodes.get(id);
        if (n?.type === OPERATION) for (const list of selections(n.body.inputs).values()) for (const s of list) add(s.tensorId, refs);
      }
    }
    return out;
  }

  /** The canvas's size in CSS pixels, as the ResizeObserver last saw it (reading it from the DOM would force a layout every frame). */
  private canvasSize: { width: number; height: number } | null = null;

  private size(): { width: number; height: number } {
    if (!this.canvasSize) this.canvasSize = { width: this.canvas.clientWidth || 800, height: this.canvas.clientHeight || 600 };
    return this.canvasSize;
  }

  /** The document changed (or the status): rebuild the view and layout, then draw. */
  refresh(): void {
    const doc = this.session.document;
    if (doc !== this.shownDoc) {
      this.shownDoc = doc;
      if (doc) this.relayoutNow(doc);
      const alive = new Set(doc?.nodes.map((n) => n.id) ?? []);
      if (this.selected.some((id) => !alive.has(id))) this.selected = this.selected.filter((id) => alive.has(id));
    }
    this.cached = null;
    this.panelsDirty = true;
    this.invalidate();
  }

  private layoutSeq = 0;

  private relayoutNow(doc: LoomDocument): void {
    const view = graphView(doc);
    this.view = view;
    // Placed nodes and nodes already laid out keep their rects at once; ELK places the rest.
    const rects = new Map<string, Rect>();
    let missing = false;
    for (const b of view.boxes) {
      const size = boxSize(b);
      const old = this.layout.rects.get(b.id);
      if (b.pinned) rects.set(b.id, { ...b.pinned, ...size });
      else if (old) rects.set(b.id, { x: old.x, y: old.y, ...size });
      else missing = true;
    }
    this.layout = { rects };
    if (!missing) return;
    const seq = ++this.layoutSeq;
    const done = (layout: Layout | null): void => {
      if (!layout || seq !== this.layoutSeq || this.view !== view) return;
      this.layout = layout;
      if (!this.fitted) {
        this.fitted = true;
        this.zoomToFit();
      }
      this.invalidate();
    };
    if (this.layoutClient) void this.layoutClient.layout(view).then(done);
    else done({ rects: new Map(gridLayout(layoutInput(view))) });
  }

  invalidate(): void {
    if (this.frame) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      this.paint();
    });
  }

  /** What the minimap shows: the graph, with a margin. */
  private minimapWorld(): Rect {
    const all = bounds(this.layout.rects.values());
    return { x: all.x - 40, y: all.y - 40, w: all.w + 80, h: all.h + 80 };
  }

  /** The parts of the scene that change with the document, selection or status (not with the view). */
  private cached: Omit<Scene, "vp" | "size" | "tool" | "layout"> | null = null;
  private panelsDirty = true;
  private minimapBase: { key: unknown; image: HTMLCanvasElement } | null = null;

  scene(): Scene | null {
    const doc = this.session.document;
    if (!doc || !this.view) return null;
    if (!this.cached || this.cached.view !== this.view) {
      const issues = this.issues();
      const colors = new Map(this.session.present.map((p) => [p.user, personColor(p.user)]));
      this.cached = {
        view: this.view,
        selected: new Set(this.selected),
        issues: issuesByNode(issues),
        issueAxes: this.issueAxesByNode(doc, issues),
        axisOrder: [...declaredAxes(doc).keys()],
        // our own entry never changes after the snapshot (the server does not echo it), so it holds no selection
        presence: this.session.present.filter((p) => p.selection?.length).map((p) => ({ user: p.user, color: colors.get(p.user)!, selection: p.selection ?? [] })),
        found: new Set(this.found),
      };
    }
    return { ...this.cached, layout: this.layout, vp: this.vp, size: this.size(), tool: this.tool };
  }

  private updatePanels(): void {
    const doc = this.session.document;
    const state = this.state();
    const issues = state.issues;
    const colors = new Map(this.session.present.map((p) => [p.user, personColor(p.user)]));
    this.toolbar.update(state, { canUndo: this.history.canUndo, canRedo: this.history.canRedo, found: this.found.length, colors, me: this.options.user });
    const axesWithIssues = new Set(issues.flatMap((i) => issueAxes(i)).map((r) => r.replace(/[+-]\d+$/, "")));
    this.axesPanel.update(doc, axesWithIssues);
    this.inspector.update(doc, this.selected, issues);
    this.projection.update(doc, this.selected);
    this.issuesPanel.update(issues, doc, state.issueCounts);
    this.shardsPanel.update(doc, this.selected, issues, this.session.version);
    this.runPanel.update(this.status.run as unknown as RunView | null);
    if (this.diagram.visible && this.session.version !== null) this.diagram.show(this.session.version);
  }

  toggleDiagram(): void {
    if (this.diagram.visible) this.diagram.hide();
    else if (this.session.version !== null) this.diagram.show(this.session.version);
    this.diagramTab.classList.toggle("active", this.diagram.visible);
    this.diagramTab.textContent = this.diagram.visible ? "Canvas" : "Diagram";
  }

  /** Draw the canvas (and, after a change of state, the panels). A pan or zoom only redraws the canvas. */
  paint(): void {
    const t0 = performance.now();
    const scene = this.scene();
    const { width, height } = this.size();
    const ratio = window.devicePixelRatio || 1;
    if (this.canvas.width !== Math.round(width * ratio) || this.canvas.height !== Math.round(height * ratio)) {
      this.canvas.width = Math.round(width * ratio);
      this.canvas.height = Math.round(height * ratio);
    }
    const ctx = this.canvas.getContext("2d");
    if (!ctx || !scene) {
      if (this.panelsDirty) {
        this.panelsDirty = false;
        this.updatePanels();
      }
      return;
    }
    if (!this.fitted && this.layout.rects.size && this.layout.rects.size === this.view?.boxes.length) {
      this.fitted = true;
      this.vp = fit(bounds(this.layout.rects.values()), width, height);
      scene.vp = this.vp;
    }
    drawScene(ctx, scene);
    this.paintMinimap(scene, ratio);
    // the panels after the canvas: the graph shows first, the DOM follows in the same frame
    if (this.panelsDirty) {
      this.panelsDirty = false;
      this.updatePanels();
    }
    this.draws += 1;
    this.lastPaintMs = performance.now() - t0;
  }

  private minimapSize: { width: number; height: number } | null = null;
  private minimapDeferred = false;

  private paintMinimap(scene: Scene, ratio: number): void {
    this.minimapSize ??= { width: this.minimap.clientWidth, height: this.minimap.clientHeight };
    const { width: mw, height: mh } = this.minimapSize;
    const m = this.minimap.getContext("2d");
    if (!mw || !mh || !m) return;
    const map = { width: mw, height: mh, world: this.minimapWorld() };
    if (this.minimap.width !== Math.round(mw * ratio)) this.minimap.width = Math.round(mw * ratio);
    if (this.minimap.height !== Math.round(mh * ratio)) this.minimap.height = Math.round(mh * ratio);
    // the boxes are drawn once per change of layout or issues; a pan only moves the frame
    const key = [this.layout, this.cached, mw, mh];
    const base = this.minimapBase;
    if (!base || (base.key as unknown[]).some((k, i) => k !== key[i])) {
      // the boxes of a large graph are drawn on the minimap just after the first paint
      if (!base && scene.view.boxes.length > 500 && !this.minimapDeferred) {
        this.minimapDeferred = true;
        setTimeout(() => this.invalidate(), 0);
        return;
      }
      const image = document.createElement("canvas");
      image.width = this.minimap.width;
      image.height = this.minimap.height;
      const b = image.getContext("2d")!;
      b.setTransform(ratio, 0, 0, ratio, 0, 0);
      drawMinimap(b, scene, map);
      this.minimapBase = { key, image };
    }
    m.setTransform(1, 0, 0, 1, 0, 0);
    m.clearRect(0, 0, this.minimap.width, this.minimap.height);
    m.drawImage(this.minimapBase!.image, 0, 0);
    m.setTransform(ratio, 0, 0, ratio, 0, 0);
    drawMinimapFrame(m, scene, map);
  }

  state(): EditorState {
    const issues = this.issues();
    return {
      ...this.status,
      unsaved: this.session.inFlight,
      document: this.session.document,
      version: this.session.version,
      issues,
      issueCounts: countIssues(this.session.issues, this.session.issueCounts, issues.slice(this.session.issues.length)),
      present: this.session.present,
    };
  }

  async requestRun(): Promise<void> {
    this.setStatus({ message: "" });
    try {
      const response = await fetch(this.options.runsUrl, {
        method: "POST",
        headers: { "Content-Type": "application/json", "X-CSRFToken": this.options.csrf },
        body: JSON.stringify({ backend: "numpy" }),
        credentials: "same-origin",
      });
      const body = (await response.json()) as { run?: RunInfo; error?: { message: string } };
      if (body.run) this.status = applyRun(this.status, { type: "run", event: "queued", run: body.run });
      else this.status = { ...this.status, message: body.error?.message ?? `the server answered ${response.status}` };
    } catch {
      this.status = { ...this.status, message: "the server could not be reached; try again" };
    }
    this.refresh();
  }

  /** Each drawn box in canvas CSS pixels (for tests). */
  boxes(): { id: string; kind: string; title: string; chips: string[]; issues: number; x: number; y: number; w: number; h: number }[] {
    if (!this.view) return [];
    const byNode = issuesByNode(this.issues());
    return this.view.boxes.flatMap((b) => {
      const r = this.layout.rects.get(b.id);
      return r ? [{ id: b.id, kind: b.kind, title: b.title, chips: b.chips.map((c) => c.ref), issues: byNode.get(b.id)?.length ?? 0, ...toScreen(r, this.vp) }] : [];
    });
  }

  colors(): typeof COLORS {
    return COLORS;
  }
}
