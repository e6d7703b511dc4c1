// The document as the server confirmed it, plus this client's edits not yet confirmed. What the
// editor shows is the confirmed document with the pending edits applied on top (optimistic): an
// edit appears at once and the server's answer either confirms it (``applied``) or takes it away
// (``rejected``). Edits from others apply to the confirmed document and never touch this
// client's undo history.
//
// Edits go to the server one at a time, in order: the next is sent once the previous is
// answered, based on the version that edit made when every version since the one the user saw
// is this client's own (so a burst on one node is not refused as conflicting with itself). They
// cannot be pipelined: an edit sent before the previous one's answer could only be based on a
// version before it, and the server refuses an edit that a version since its base conflicts
// with, this client's own versions included.
//
// Edit ids are ``<random UUID of this page load>-<n>``, and the server remembers them (per graph
// and author): an edit whose id it has seen is not applied again, and its sender alone gets
// ``applied`` with the version that edit made. So when the line drops, nothing pending is lost
// and nothing is guessed: after the reconnect's snapshot every unconfirmed edit is sent again as
// it is (same id, same ops), the one whose ``applied`` the drop lost included, and the server's
// answer decides. An ``applied`` for a version the confirmed document already holds (that repeat
// answer, or an event the snapshot already contains) only confirms our edit; the document,
// version and issues stay as they are. One that skips a version means an event was missed: the
// session is out of sync and needs a new snapshot.

import type { Issue, LoomDocument } from "../model/document";
import { applyOps, type EditOp } from "../model/edits";
import type {
  AppliedMessage,
  EditMessage,
  IssueCounts,
  Presence,
  PresenceMessage,
  RejectedMessage,
} from "./protocol";

/** An edit of this client that the server has not confirmed. */
export interface Pending {
  id: string;
  ops: EditOp[];
  /** The confirmed version when the user made it: what the server rebases it from. */
  seen: number;
  /** ``queued``: not sent on this line; ``sent``: answer awaited; ``lost``: sent, then the line dropped before the answer. */
  state: "queued" | "sent" | "lost";
}

/** What ``Session.applied`` reads of an ``applied`` message (the offline page makes its own). */
export type AppliedEdit = Pick<AppliedMessage, "id" | "version" | "ops" | "issues"> &
  Partial<AppliedMessage>;

/** An edit message as this client sends it: node ops only (shards go out on their own, see sync/controller.ts). */
export type SentEdit = Omit<EditMessage, "ops"> & { ops: EditOp[] };

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

  /** ``clientId`` prefixes every edit id: a random UUID per page load, so that no id is used twice by one user on one graph. */
  constructor(private readonly clientId: string) {}

  /** A new edit id (``kind``, when given, names what the edit is for, as ``shard-<client>-<n>``). */
  newId(kind?: string): string {
    const id = `${this.clientId}-${++this.counter}`;
    return kind ? `${kind}-${id}` : id;
  }

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
   * answer a dropped line lost are queued again with their ids: the server answers one it
   * already applied without applying it twice. An edit still awaited on an open line stays
   * awaited (its answer will come). Returns how many edits are to be sent (again).
   */
  snapshot(
    document: LoomDocument,
    version: number,
    issues: Issue[],
    present: Presence[],
    issueCounts: IssueCounts | null = null,
  ): number {
    for (const p of this.pending) if (p.state === "lost") p.state = "queued";
    this.confirmed = document;
    this.version = version;
    this.issues = issues;
    this.issueCounts = issueCounts;
    this.present = present;
    this.view = null;
    if (!this.pending.length) this.own.clear();
    return this.pending.filter((p) => p.state === "queued").length;
  }

  /** Queue local ops (already checked against ``document``); ``next`` gives the message that sends them. Returns the edit's id. */
  edit(ops: EditOp[]): string {
    if (this.confirmed === null || this.version === null)
      throw new Error("no document yet; wait for the snapshot");
    applyOps(this.document!, ops); // throws before anything is queued when the ops do not apply
    const id = this.newId();
    this.pending.push({ id, ops, seen: this.version, state: "queued" });
    this.view = null;
    return id;
  }

  /** The next edit to send, marked sent; null while one is awaited, or none is queued. */
  next(): SentEdit | null {
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

  /**
   * An edit was applied (ours or someone else's). Returns our ops when it was ours, and whether
   * the session is out of sync (the ops do not fit the confirmed document, or a version was
   * skipped): then only a new snapshot helps, and nothing was changed by a skipping message.
   */
  applied(msg: AppliedEdit): { mine: EditOp[] | null; outOfSync: boolean } {
    if (this.version !== null && msg.version > this.version + 1)
      return { mine: null, outOfSync: true };
    const at = this.pending.findIndex((p) => p.id === msg.id);
    const mine = at >= 0 ? this.pending[at]!.ops : null;
    if (at >= 0) {
      this.pending.splice(at, 1);
      if (this.pending.length) this.own.add(msg.version);
      else this.own.clear();
      this.view = null;
    }
    // a version the confirmed document holds already: the answer to an edit sent again, or an
    // event the snapshot contains; its ops are in, its issues are older than ours
    if (this.version !== null && msg.version <= this.version) return { mine, outOfSync: false };
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
  rejected(msg: Pick<RejectedMessage, "id"> & Partial<RejectedMessage>): EditOp[] | null {
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
