// The editor's side of the live session (DESIGN.md §6): the websocket and its reconnects, the
// edits in flight (``Session``), the undo history of this user's own edits, the edits the server
// expands (shards, plan switches) and what the server said (role, run, link). The editor hands it
// the ops of each user action (``commit``); it sends them, records the undo step and folds every
// server message into its state (``receive``). Nothing here draws: ``ControllerHooks`` tell the
// editor what changed.

import { ExpandedEdits } from "../history/expanded";
import { History } from "../history/history";
import { uuid } from "../model/author";
import type { Issue, LoomDocument } from "../model/document";
import { invertOps, type EditOp } from "../model/edits";
import { predictIssues } from "../model/issues";
import {
  applyRun,
  countIssues,
  initialState,
  READ_ONLY_ROLES,
  type EditorState,
  type LinkState,
} from "../model/state";
import { backoffDelay } from "./backoff";
import type {
  LivePlanCost,
  NotificationMessage,
  ReviewMessage,
  RunInfo,
  ServerMessage,
} from "./protocol";
import { startRun } from "./runs";
import { Session } from "./session";
import { forPeople } from "../model/people";
import { GraphSocket, refusalMessage, socketUrl } from "./socket";

/** Refusals that mean "not now" (the database is unavailable, too many edits at once): the edit is sent again later. */
const RETRYABLE: ReadonlySet<string> = new Set(["unavailable", "rate_limited"]);
/** The most ids a presence selection may carry (SELECTION_MAX in geon/graphs/protocol.py). */
export const PRESENCE_SELECTION_MAX = 1000;

/** What the controller tells the editor. */
export interface ControllerHooks {
  /** The document, the issues or the status changed: redraw. */
  changed(): void;
  /** Only the reconnect countdown moved: redraw the panels. */
  ticked(): void;
  /** A message for the user (empty: clear the last one). */
  flash(message: string): void;
  /** The graph's shard plans changed on the server. */
  plansChanged(): void;
  /** A review of the graph changed (docs/reviews.md, Live events): what happened and its summary. */
  reviewChanged?(event: ReviewMessage["event"], review: ReviewMessage["review"]): void;
  /** A notification for this user (docs/reviews.md, Notifications), and how many are unread. */
  notified?(notification: NotificationMessage["notification"], unread: number): void;
  /** The node ids this user has selected (announced again after a reconnect). */
  selection(): string[];
  /** An ``applied`` carried the collectives of the document's current plan (labels at once). */
  planCost?(cost: LivePlanCost): void;
}

/** The fields of the websocket ``shard`` op (the server expands it into Applications). */
export interface ShardRequest {
  operation: string;
  dim?: string;
  parts?: number;
  chunk?: number;
  grid?: Record<string, number>;
}

function plural(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? "" : "s"}`;
}

export class Controller {
  /** Its edit ids start with a random UUID of this page load (the server answers a reused id as a repeat). */
  readonly session = new Session(uuid());
  readonly history = new History();
  /** Sent edits the server expands (shards), recorded in the history when they come back applied. */
  private readonly expanded = new ExpandedEdits();
  private status: EditorState = initialState();
  private socket: GraphSocket | null = null;
  private presenceSupported = true;
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

  /** ``offline``: no websocket; documents come from ``loadDocument`` (the benchmark page). */
  constructor(
    private readonly hooks: ControllerHooks,
    private readonly offline: boolean,
  ) {}

  // --- the line --------------------------------------------------------------------------

  connect(wsPath: string): void {
    this.socket = new GraphSocket(socketUrl(wsPath, window.location), {
      onConnecting: (attempts) => this.setLink({ attempts, retryAt: null }, "connecting"),
      onOpen: () => {
        this.awaitingSnapshot = true;
        this.setLink({ retryAt: null }, "open");
      },
      onMessage: (msg) => this.receive(msg),
      onClose: (code, retryIn) => this.lineClosed(code, retryIn),
      onInvalid: (reason) => this.say(`ignored a message from the server: ${reason}`),
    });
    this.socket.connect();
  }

  /** While waiting to reconnect, try at once (the user asked to). */
  retryNow(): void {
    this.socket?.retryNow();
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
      this.setLink(
        {
          retryAt: null,
          lost: true,
          refused: { code, message: refusalMessage(code, this.accessRemoved) },
        },
        "closed",
      );
      return;
    }
    this.setLink({ retryAt: Date.now() + retryIn, lost: true }, "closed");
    this.countdown ??= setInterval(() => {
      if (this.status.link.retryAt === null) this.stopCountdown();
      else this.hooks.ticked(); // only the toolbar's countdown changes: no new scene
    }, 250);
  }

  private stopCountdown(): void {
    if (this.countdown !== null) clearInterval(this.countdown);
    this.countdown = null;
  }

  private setLink(patch: Partial<LinkState>, connection?: EditorState["connection"]): void {
    this.setStatus({
      link: { ...this.status.link, ...patch },
      ...(connection ? { connection } : {}),
    });
  }

  private setStatus(patch: Partial<EditorState>): void {
    this.status = { ...this.status, ...patch };
    this.hooks.changed();
  }

  /** Show ``message`` in the toolbar's status line. */
  say(message: string): void {
    this.setStatus({ message });
  }

  /** Send the next unconfirmed edit when the line is open and none is awaited (edits go one at a time). */
  private flush(): void {
    if (
      this.offline ||
      this.awaitingSnapshot ||
      !this.socket?.isOpen ||
      Date.now() < this.holdUntil
    )
      return;
    const msg = this.session.next();
    if (msg) this.socket.send(msg);
  }

  // --- what the server says --------------------------------------------------------------

  receive(msg: ServerMessage): void {
    switch (msg.type) {
      case "snapshot":
        this.snapshot(msg);
        break;
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
          // past what one edit may carry (the server says so), its undo would be refused
          if (entry && msg.undoable === false)
            this.hooks.flash(
              `"${entry.name}" cannot be undone here: its ${entry.ops.length} changes are more than one edit may make`,
            );
          else if (entry) this.history.record(entry);
          if (msg.planCost) this.hooks.planCost?.(msg.planCost);
        }
        break;
      }
      case "rejected":
        if (RETRYABLE.has(msg.reason) && this.session.requeue(msg.id)) this.holdBack(msg.message);
        else
          this.dropped(
            msg.id,
            `the server refused it: ${forPeople(msg.message, this.session.document)}`,
          );
        break;
      case "presence":
        this.session.presence(msg);
        break;
      case "run":
        this.status = applyRun(this.status, msg);
        break;
      case "access":
        this.status = { ...this.status, role: msg.role };
        break;
      case "error":
        this.error(msg.error, msg.id);
        break;
      case "plans":
        this.hooks.plansChanged();
        break;
      case "review":
        this.hooks.reviewChanged?.(msg.event, msg.review);
        break;
      case "notification":
        this.hooks.notified?.(msg.notification, msg.unread);
        break;
      case "pong":
        break;
    }
    this.flush();
    this.hooks.changed();
  }

  private snapshot(msg: Extract<ServerMessage, { type: "snapshot" }>): void {
    // a snapshot after a reconnect (not the first, nor one that replaces the document on an open line)
    const reconnected = this.session.version !== null && this.awaitingSnapshot;
    const resend = this.session.snapshot(
      msg.document,
      msg.version,
      msg.issues,
      msg.present,
      msg.issueCounts ?? null,
    );
    this.awaitingSnapshot = false;
    if (msg.role !== undefined) this.status = { ...this.status, role: msg.role };
    // the server forgot this client's selection with the old line
    const selection = this.hooks.selection();
    if (reconnected && selection.length && this.presenceSupported)
      this.socket?.send({
        type: "presence",
        selection: selection.slice(0, PRESENCE_SELECTION_MAX),
      });
    this.expanded.clear();
    // the server answers an edit it already applied without applying it again
    if (reconnected && resend)
      this.hooks.flash(`reconnected: ${plural(resend, "unsaved edit")} sent again`);
  }

  /** Not refused, only not now: the edit stays, and is sent again after a backoff. */
  private holdBack(message: string): void {
    const wait = backoffDelay(this.busyTries++);
    this.holdUntil = Date.now() + wait;
    setTimeout(() => this.flush(), wait);
    this.hooks.flash(
      `${message}; your edit is kept and is sent again in ${Math.ceil(wait / 1000)} s`,
    );
  }

  /** The server refused our edit ``id``: it disappears, and leaves the history. */
  private dropped(id: string, why: string): void {
    const ops = this.session.rejected({ id });
    if (ops) this.history.forget(ops);
    this.expanded.refused(id);
    const name = ops ? this.editNames.get(ops) : undefined;
    this.hooks.flash(`${name ? `your edit "${name}" was dropped: ` : ""}${why}`);
  }

  private error(error: { code: string; message: string }, id: string | undefined): void {
    // an edit the server could not read at all is refused like a rejected one
    const ops = id ? this.session.rejected({ id }) : null;
    if (ops) this.history.forget(ops);
    this.expanded.refused(id);
    if (error.code === "access_removed") this.accessRemoved = error.message;
    if (error.code === "unknown_message_type" && error.message.includes('"presence"'))
      this.presenceSupported = false;
    else this.hooks.flash(forPeople(error.message, this.session.document));
  }

  /** Offline use (the benchmark and try pages): show a document as if the server had sent it. */
  loadDocument(doc: LoomDocument): void {
    this.session.snapshot(doc, 1, [], []);
    this.hooks.changed();
  }

  /** Offline use (the try page): show what the server's check of the shown document found. */
  showIssues(issues: Issue[]): void {
    this.session.issues = issues;
    this.hooks.changed();
  }

  /** The toolbar's Run: a logical run of the current version (its progress comes as ``run`` messages). */
  async requestRun(graphId: string, csrf: string): Promise<void> {
    this.say("");
    const answer = await startRun(graphId, csrf, { sharded: false });
    if ("run" in answer) this.runQueued(answer.run);
    else this.say(answer.error);
  }

  /** A run queued through the REST API: shown as if its ``queued`` event had come. */
  runQueued(run: RunInfo): void {
    this.status = applyRun(this.status, { type: "run", event: "queued", run });
    this.hooks.changed();
  }

  // --- what this user does ---------------------------------------------------------------

  /** Why this user may not edit (their role only lets them look), or null. */
  readOnly(): string | null {
    const role = this.status.role;
    if (role === null || !READ_ONLY_ROLES.has(role)) return null;
    return `you are a ${role} on this graph, so edits are refused; an owner can make you an editor`;
  }

  /** The ops of the user action ``name`` (built from the shown document): shown at once, sent as one edit, recorded as one undo step. */
  commit(name: string, ops: EditOp[]): void {
    const inverse = invertOps(this.session.document!, ops);
    this.send(ops, name);
    this.history.record({ name, ops, inverse });
  }

  /** Queue the ops of the user action ``name`` as one edit and send it when the line allows. */
  private send(ops: EditOp[], name: string): void {
    const id = this.session.edit(ops);
    this.editNames.set(ops, name);
    if (this.offline)
      this.session.applied({
        id,
        version: (this.session.version ?? 0) + 1,
        ops,
        issues: this.session.issues,
      });
    this.flush();
  }

  /** Send the inverse of this user's last edit (a read-only role is told why not). */
  undo(): void {
    const readOnly = this.readOnly();
    if (readOnly) return this.hooks.flash(readOnly);
    const entry = this.history.undo();
    if (entry)
      this.replay(entry.inverse, entry.ops, `undo ${entry.name}`, `cannot undo "${entry.name}"`);
  }

  redo(): void {
    const readOnly = this.readOnly();
    if (readOnly) return this.hooks.flash(readOnly);
    const entry = this.history.redo();
    if (entry)
      this.replay(entry.ops, entry.ops, `redo ${entry.name}`, `cannot redo "${entry.name}"`);
  }

  private replay(ops: EditOp[], recorded: EditOp[], name: string, failure: string): void {
    try {
      this.send(ops, name);
    } catch (e) {
      this.history.forget(recorded);
      this.hooks.flash(`${failure}: ${(e as Error).message}`);
    }
    this.hooks.changed();
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
    this.socket!.send({
      type: "edit",
      id,
      baseVersion: this.session.version!,
      ops: [{ op: "shard", ...request }],
    });
    return null;
  }

  /**
   * The id of an edit the server expands (a shard, a plan's switch), waited for so that its
   * ``applied`` becomes one undo step named ``name``; null while the graph is not loaded.
   */
  expectExpanded(prefix: string, name: string): string | null {
    if (!this.socket || this.session.version === null) return null;
    const id = this.session.newId(prefix);
    this.expanded.expect(id, name);
    return id;
  }

  /** The server will not apply the expanded edit ``id`` (the plan switch failed before it was sent). */
  cancelExpanded(id: string): void {
    this.expanded.refused(id);
  }

  /** Tell the others what this user selected (the server takes at most PRESENCE_SELECTION_MAX ids, so a select-all on a big graph shows its first ones). */
  announceSelection(ids: string[]): void {
    if (this.presenceSupported && this.socket && this.session.version !== null)
      this.socket.send({ type: "presence", selection: ids.slice(0, PRESENCE_SELECTION_MAX) });
  }

  // --- what the editor shows -------------------------------------------------------------

  /**
   * The issues to show: the server's, plus while our edits are in flight, the axis errors the
   * client already predicts for operations the server has not re-checked yet.
   */
  /** Warnings a puzzle asks for (issue 36: the outer product is the answer there, not an
   * AccidentalBroadcast), never shown as a mistake while that puzzle is open. */
  quiet: ReadonlySet<string> = new Set();

  private shown(list: Issue[]): Issue[] {
    return this.quiet.size
      ? list.filter((i) => !(i.severity === "warning" && this.quiet.has(i.constraint)))
      : list;
  }

  issues(): Issue[] {
    const server = this.shown(this.session.issues);
    const doc = this.session.document;
    if (!doc || !this.session.inFlight) return server;
    return [...server, ...this.shown(predictIssues(doc, server))];
  }

  state(): EditorState {
    const issues = this.issues();
    const server = this.shown(this.session.issues);
    return {
      ...this.status,
      unsaved: this.session.inFlight,
      document: this.session.document,
      version: this.session.version,
      issues,
      issueCounts: countIssues(
        server,
        this.quiet.size ? null : this.session.issueCounts,
        issues.slice(server.length),
      ),
      present: this.session.present,
    };
  }
}
