// The document as the server confirmed it, plus this client's edits in flight. What the editor
// shows is the confirmed document with the pending edits applied on top (optimistic): an edit
// appears at once and the server's answer either confirms it (``applied``) or takes it away
// (``rejected``). Edits from others apply to the confirmed document and never touch this
// client's undo history.

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

interface Pending {
  id: string;
  ops: EditOp[];
}

export class Session {
  confirmed: LoomDocument | null = null;
  version: number | null = null;
  issues: Issue[] = [];
  present: Presence[] = [];
  private pending: Pending[] = [];
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

  get inFlight(): number {
    return this.pending.length;
  }

  snapshot(document: LoomDocument, version: number, issues: Issue[], present: Presence[]): Pending[] {
    const dropped = this.pending;
    this.confirmed = document;
    this.version = version;
    this.issues = issues;
    this.present = present;
    this.pending = [];
    this.view = null;
    return dropped;
  }

  /** Queue local ops (already checked against ``document``) and the message that sends them. */
  edit(ops: EditOp[]): EditMessage {
    if (this.confirmed === null || this.version === null) throw new Error("no document yet; wait for the snapshot");
    const id = `${this.clientId}-${++this.counter}`;
    applyOps(this.document!, ops); // throws before anything is queued when the ops do not apply
    this.pending.push({ id, ops });
    this.view = null;
    return { type: "edit", id, baseVersion: this.version, ops };
  }

  /** An edit was applied (ours or someone else's). Returns our ops when it was ours. */
  applied(msg: Omit<AppliedMessage, "id"> & { id: string | null }): { mine: EditOp[] | null; outOfSync: boolean } {
    const at = this.pending.findIndex((p) => p.id === msg.id);
    const mine = at >= 0 ? this.pending[at]!.ops : null;
    if (at >= 0) this.pending.splice(at, 1);
    this.version = msg.version;
    this.issues = msg.issues;
    this.view = null;
    try {
      this.confirmed = applyOps(this.confirmed!, msg.ops);
      return { mine, outOfSync: false };
    } catch {
      return { mine, outOfSync: true };
    }
  }

  /** The server refused one of our edits: it disappears; the ops are returned so history forgets them. */
  rejected(msg: RejectedMessage): EditOp[] | null {
    const at = this.pending.findIndex((p) => p.id === msg.id);
    if (at < 0) return null;
    const [p] = this.pending.splice(at, 1);
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
