// The diff page's model (issue 18, "Diffs"): from the server's node-level difference of two
// versions, each node's status (added, removed, changed) and the list of changes by name.

import { nodeName, type LoomDocument } from "../model/document";

export type Status = "added" | "removed" | "changed";

export interface VersionDiff {
  base: number;
  target: number;
  added: string[];
  removed: string[];
  changed: { id: string; fields: string[] }[];
}

/** Each changed node's status. */
export function statuses(diff: VersionDiff): Map<string, Status> {
  const found = new Map<string, Status>();
  for (const id of diff.added) found.set(id, "added");
  for (const id of diff.removed) found.set(id, "removed");
  for (const c of diff.changed) found.set(c.id, "changed");
  return found;
}

/** How people read a field name ("tags.urn:…/Layout" -> "Layout", "body.kernel" -> "kernel"). */
export function fieldName(field: string): string {
  const last = field.split("/").pop() ?? field;
  return last.startsWith("body.") ? last.slice(5) : last.startsWith("tags.") ? last.slice(5) : last;
}

/** A node's name (``nodeName``) in the first of ``docs`` that holds it; its id when none does. */
export function nameIn(id: string, ...docs: (LoomDocument | null)[]): string {
  for (const doc of docs) {
    const node = doc?.nodes.find((n) => n.id === id);
    if (node) return nodeName(node);
  }
  return id;
}

export interface ChangeRow {
  id: string;
  status: Status;
  name: string;
  /** The fields that changed (changed nodes only). */
  fields: string[];
  /** Only the canvas position changed. */
  moved: boolean;
}

/** The changes, by name: added, removed, then changed (moves last). */
export function changeRows(diff: VersionDiff, before: LoomDocument | null, after: LoomDocument | null): ChangeRow[] {
  const rows: ChangeRow[] = [
    ...diff.added.map((id) => ({ id, status: "added" as const, name: nameIn(id, after), fields: [], moved: false })),
    ...diff.removed.map((id) => ({ id, status: "removed" as const, name: nameIn(id, before), fields: [], moved: false })),
    ...diff.changed.map((c) => {
      const fields = [...new Set(c.fields.map(fieldName))];
      return { id: c.id, status: "changed" as const, name: nameIn(c.id, after, before), fields, moved: fields.every((f) => f === "Layout") };
    }),
  ];
  return rows.sort((a, b) => Number(a.moved) - Number(b.moved));
}

/** The colour of each status on the canvas and in the legend. */
export const STATUS_COLORS: Record<Status, string> = { added: "#1f9d55", removed: "#d64545", changed: "#d9911a" };

/** The edges of the version after that the version before lacks (added) and the reverse
 * (removed), each as "from->to" of the node ids. */
export function edgeChanges(
  before: readonly { from: string; to: string }[],
  after: readonly { from: string; to: string }[],
): { added: Set<string>; removed: Set<string> } {
  const key = (e: { from: string; to: string }) => `${e.from}->${e.to}`;
  const had = new Set(before.map(key));
  const has = new Set(after.map(key));
  return { added: new Set([...has].filter((k) => !had.has(k))), removed: new Set([...had].filter((k) => !has.has(k))) };
}
