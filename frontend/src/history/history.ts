// Undo and redo of the user's own actions. Each entry is one user action: the ops it sent and
// the ops that undo it. Remote edits are never recorded here. A mark opens a group (a drag, a
// paste with its re-derivations): everything recorded until ``commit`` is one entry, and
// ``cancel`` gives back the ops that return the document to the mark.

import type { EditOp } from "../model/edits";

export interface Entry {
  /** What the user did, for tooltips ("add tensor x"). */
  name: string;
  ops: EditOp[];
  inverse: EditOp[];
}

export class History {
  private undoStack: Entry[] = [];
  private redoStack: Entry[] = [];
  private group: Entry | null = null;

  constructor(private readonly limit = 200) {}

  /** Record one user action (inside a mark, it joins the open group). */
  record(entry: Entry): void {
    if (!entry.ops.length) return;
    if (this.group) {
      this.group.ops.push(...entry.ops);
      this.group.inverse = [...entry.inverse, ...this.group.inverse];
      return;
    }
    this.push(entry);
  }

  mark(name: string): void {
    this.group = { name, ops: [], inverse: [] };
  }

  commit(): void {
    const g = this.group;
    this.group = null;
    if (g && g.ops.length) this.push(g);
  }

  /** Close the open group without keeping it; the ops that undo what it recorded. */
  cancel(): EditOp[] {
    const g = this.group;
    this.group = null;
    return g ? g.inverse : [];
  }

  private push(entry: Entry): void {
    this.undoStack.push(entry);
    if (this.undoStack.length > this.limit) this.undoStack.shift();
    this.redoStack = [];
  }

  /** The entry to undo (its ``inverse`` is what to send), moved to the redo stack. */
  undo(): Entry | null {
    const e = this.undoStack.pop() ?? null;
    if (e) this.redoStack.push(e);
    return e;
  }

  /** The entry to redo (its ``ops`` is what to send), moved back to the undo stack. */
  redo(): Entry | null {
    const e = this.redoStack.pop() ?? null;
    if (e) this.undoStack.push(e);
    return e;
  }

  /**
   * The server refused what an entry sent: drop it wherever it is, so undo never replays an
   * edit that did not happen.
   */
  forget(ops: EditOp[]): void {
    const drop = (stack: Entry[]) => stack.filter((e) => e.ops !== ops && e.inverse !== ops);
    this.undoStack = drop(this.undoStack);
    this.redoStack = drop(this.redoStack);
  }

  get canUndo(): boolean {
    return this.undoStack.length > 0;
  }

  get canRedo(): boolean {
    return this.redoStack.length > 0;
  }

  names(): { undo: string[]; redo: string[] } {
    return { undo: this.undoStack.map((e) => e.name), redo: this.redoStack.map((e) => e.name) };
  }
}
