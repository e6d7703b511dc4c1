// Edits that the server expands (the websocket ``shard`` op): the client cannot invert them
// before it sees the node ops they become, so they enter the history when the server's
// ``applied`` for them comes back, with the expanded ops to redo and their inverse against the
// confirmed document just before them (the document the server applied them to). Only this
// client's own edits are waited for: an ``applied`` with any other id (another person's edit)
// is never recorded.

import type { LoomDocument } from "../model/document";
import { invertOps, type EditOp } from "../model/edits";
import type { Entry } from "./history";

export class ExpandedEdits {
  private readonly waiting = new Map<string, string>();

  /** An edit with this id was sent; ``name`` is its history entry's name. */
  expect(id: string, name: string): void {
    this.waiting.set(id, name);
  }

  /** How many sent edits have no answer yet. */
  get pending(): number {
    return this.waiting.size;
  }

  /**
   * An edit was applied. When it is one we wait for, the entry to record: the expanded ops and
   * their inverse against ``before`` (the confirmed document the server applied them to), or
   * null when they do not apply to it (the session resynchronises then, and there is nothing
   * sound to undo).
   */
  applied(msg: { id: string | null; ops: EditOp[] }, before: LoomDocument | null): Entry | null {
    if (msg.id === null || !this.waiting.has(msg.id)) return null;
    const name = this.waiting.get(msg.id)!;
    this.waiting.delete(msg.id);
    if (!before || !msg.ops.length) return null;
    try {
      return { name, ops: msg.ops, inverse: invertOps(before, msg.ops) };
    } catch {
      return null;
    }
  }

  /** The server refused the edit (or could not read it): stop waiting for it. */
  refused(id: string | null | undefined): void {
    if (id) this.waiting.delete(id);
  }

  /** A new snapshot: answers to edits sent before it will never come. */
  clear(): void {
    this.waiting.clear();
  }
}
