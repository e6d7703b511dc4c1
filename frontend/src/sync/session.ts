// The document as the server confirmed it, plus this client's edits not yet confirmed. What the
// editor shows is the confirmed document with the pending edits applied on top (optimistic): an
// edit appears at once and the server's answer either confirms it (``applied``) or takes it away
// (``rejected``). Edits from others apply to the confirmed document and never touch this
// client's undo history.
//
// Edits go to the server one at a time, in order: the next is sent once the previous is
// answered, based on the version that edit made when every version since the one the user saw
// is this client's own (so a burst on one node is not refused as conflicting with itself).
//
// When the line drops, nothing pending is lost: the edit that was on the wire may or may not
// have been applied (its ``applied`` may be what was lost). The server does not remember edit
// ids, so the snapshot that follows a reconnect decides: when its version is past the last one
// confirmed here and the edit's effect is already in its document (the nodes it added exist, the
// nodes it removed are gone, its merges change nothing), it was applied and is confirmed, never
// sent twice; otherwise it is sent again with the rest, each based on the version its user saw,
// which the server rebases, or refuses with ``conflict`` when the same field changed meanwhile.

import type { Issue, LoomDocument, Point } from "../model/document";
import { applyOps, type EditOp } from "../model/edits";

/** One connected client (a user may have several: each tab is a client). */
export interface Presence {
  client?: string;
  user: string;
  name?: string;
  selection?: string[];
  cursor?: Point | null;
}

/** The document's issue counts when the server sends only some of its issues. */
export interface IssueCounts {
  error: number;
  warning: number;
}

export interface EditMessage {
  type: "edit";
  id: string;
  baseVersion: number;
  ops: EditOp[];
}

export interface AppliedMessage {
  type: "applied";
  /** The sender's edit id; null for edits made through the REST API. */
  id: string | null;
  version: number;
  ops: EditOp[];
  issues: Issue[];
  /** Every issue's count by severity, when ``issues`` may be cut short (absent: the list is whole). */
  issueCounts?: IssueCounts;
  author?: string;
}

export interface RejectedMessage {
  type: "rejected";
  id: string;
  reason: string;
  message: string;
  version: number;
  conflicts?: { id: string; field: string }[];
}

export interface PresenceMessage extends Presence {
  type: "presence";
  event: "join" | "leave" | "update";
}

/** An edit of this client that the server has not confirmed. */
export interface Pending {
  id: string;
  ops: EditOp[];
  /** The confirmed version when the user made it: what the server rebases it from. */
  seen: number;
  /** ``queued``: not sent on this line; ``sent``: answer awaited; ``lost``: sent, then the line dropped before the answer. */
  state: "queued" | "sent" | "lost";
}

/** What a snapshot made of the edits pending before it. */
export interface Resync {
  /** Edits whose answer the drop lost but which the snapshot shows applied (kept, not re-sent). */
  applied: Pending[];
  /** Edits that will be sent (again). */
  resend: number;
}

/** Objects compared by value whatever their keys' order (the server may reorder them). */
function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  return ka.every((k) => Object.prototype.hasOwnProperty.call(b, k) && sameJson((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
}

/** Whether every op of an edit is already in ``doc``: what it adds exists, what it removes is gone, its merges change nothing. */
export function reflected(doc: LoomDocument, ops: readonly EditOp[]): boolean {
  const ids = new Map(doc.nodes.map((n) => [n.id, n]));
  return ops.every((op) => {
    if (op.op === "add_node") return ids.has(op.node.id);
    if (op.op === "remove_node") return !ids.has(op.id);
    const node = ids.get(op.id);
    if (!node) return false;
    const merged = applyOps({ ...doc, nodes: [node] }, [op]).nodes[0];
    return sameJson(merged, node);
  });
}

export class Session {
  confirmed: LoomDocument | null = null;
  version: number | null = null;
  issues: Issue[] = [];
  issueCounts: IssueCounts | null = null;
  present: Presence[] = [];
  private pending: Pending[] = [];
  /** Versions made by this client's own edits since the oldest pending one was made. */
  private own = new Set<number>();
  private view: LoomDocument | null = null;
  private counter = 0;

  constructor(private readonly clientId: string) {}

  /** The document to show: confirmed plus pending edits. */
  get document(): LoomDocument | null {
    if (this.view === null && this.confirmed) {
      let doc = this.confirmed;
      for (const p of this.pending) {
        try {
          doc = applyOps(doc, p.ops);
        } catch {
          /* a pending edit that no longer applies is shown as not applied; the server decides */
        }
      }
      this.view = doc;
    }
    return this.view;
  }

  /** How many of this client's edits the server has not confirmed (sent or not). */
  get inFlight(): number {
    return this.pending.length;
  }

  /**
   * The server's document (on connect, after a reconnect, or when it was replaced). Edits whose
   * answer a dropped line lost are confirmed when the snapshot shows them, else queued again;
   * an edit still awaited on an open line stays awaited (its answer will come).
   */
  snapshot(document: LoomDocument, version: number, issues: Issue[], present: Presence[], issueCounts: IssueCounts | null = null): Resync {
    const before = this.version;
    const applied: Pending[] = [];
    for (const p of [...this.pending]) {
      if (p.state !== "lost") continue;
      if (before !== null && version > before && reflected(document, p.ops)) {
        this.pending.splice(this.pending.indexOf(p), 1);
        applied.push(p);
        // the one version between is this edit's: later edits may build on it
        if (version === before + 1) this.own.add(version);
      } else p.state = "queued";
    }
    this.confirmed = document;
    this.version = version;
    this.issues = issues;
    this.issueCounts = issueCounts;
    this.present = present;
    this.view = null;
    if (!this.pending.length) this.own.clear();
    return { applied, resend: this.pending.filter((p) => p.state === "queued").length };
  }

  /** Queue local ops (already checked against ``document``); ``next`` gives the message that sends them. Returns the edit's id. */
  edit(ops: EditOp[]): string {
    if (this.confirmed === null || this.version === null) throw new Error("no document yet; wait for the snapshot");
    const id = `${this.clientId}-${++this.counter}`;
    applyOps(this.document!, ops); // throws before anything is queued when the ops do not apply
    this.pending.push({ id, ops, seen: this.version, state: "queued" });
    this.view = null;
    return id;
  }

  /** The next edit to send, marked sent; null while one is awaited, or none is queued. */
  next(): EditMessage | null {
    const p = this.pending[0];
    if (!p || p.state !== "queued") return null;
    p.state = "sent";
    let base = p.seen;
    while (this.own.has(base + 1)) base += 1;
    return { type: "edit", id: p.id, baseVersion: base, ops: p.ops };
  }

  /** The line dropped: what was sent has no answer coming. */
  lineLost(): void {
    for (const p of this.pending) if (p.state === "sent") p.state = "lost";
  }

  /** An edit was applied (ours or someone else's). Returns our ops when it was ours. */
  applied(msg: Omit<AppliedMessage, "id"> & { id: string | null }): { mine: EditOp[] | null; outOfSync: boolean } {
    const at = this.pending.findIndex((p) => p.id === msg.id);
    const mine = at >= 0 ? this.pending[at]!.ops : null;
    if (at >= 0) {
      this.pending.splice(at, 1);
      if (this.pending.length) this.own.add(msg.version);
      else this.own.clear();
    }
    this.version = msg.version;
    this.issues = msg.issues;
    this.issueCounts = msg.issueCounts ?? null;
    this.view = null;
    try {
      this.confirmed = applyOps(this.confirmed!, msg.ops);
      return { mine, outOfSync: false };
    } catch {
      return { mine, outOfSync: true };
    }
  }

  /** The server could not take our edit now (``unavailable``, ``rate_limited``): it is queued again, first in line. False when it is not ours. */
  requeue(id: string): boolean {
    const p = this.pending.find((q) => q.id === id);
    if (!p) return false;
    p.state = "queued";
    return true;
  }

  /** The server refused one of our edits: it disappears; the ops are returned so history forgets them. */
  rejected(msg: RejectedMessage): EditOp[] | null {
    const at = this.pending.findIndex((p) => p.id === msg.id);
    if (at < 0) return null;
    const [p] = this.pending.splice(at, 1);
    if (!this.pending.length) this.own.clear();
    this.view = null;
    return p!.ops;
  }

  /** Another client joined, left or changed its selection (keyed by client, else by user). */
  presence(msg: PresenceMessage): void {
    const key = (p: Presence) => p.client ?? p.user;
    const { type: _type, event, ...entry } = msg;
    const at = this.present.findIndex((p) => key(p) === key(msg));
    const next = [...this.present];
    if (event === "leave") {
      if (at >= 0) next.splice(at, 1);
    } else if (at >= 0) next[at] = { ...next[at]!, ...entry };
    else next.push(entry);
    this.present = next;
  }
}
