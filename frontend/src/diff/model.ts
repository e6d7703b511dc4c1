// The diff page's model (issue 18, "Diffs"): from the server's node-level difference of two
// versions, each node's status (added, removed, changed) and the list of changes by name.

import { nodeById, type LoomDocument, type LoomNode } from "../model/document";
import { nodeTitle, scopeOf } from "../model/planWhy";

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

/** A node as people read it in the first of ``docs`` (id -> node) that holds it (issue 35: the
 * version diff names each change, never by its id): an operation by its name, what it writes and
 * its scope ("op:dot → up in layers.0/attn"), a tensor by its name and scope, an application as
 * the shard of its operation, a note by its first words, and a node with no name by its kind
 * ("an unnamed Tensor"). */
export function titleIn(id: string, ...docs: ReadonlyMap<string, LoomNode>[]): string {
  const nodes = docs.find((d) => d.has(id));
  const node = nodes?.get(id);
  if (!nodes || !node) return "a node neither version holds";
  const find = (other: string) => nodes.get(other);
  const kind = node.type.split("/").pop() ?? "node";
  if (kind === "Application") {
    const op = find(String(node.body?.operationId ?? ""));
    return `a shard of ${op ? nodeTitle(op, find) : "an operation no longer in the graph"}`;
  }
  if (kind === "Note") return `note "${String(node.body?.message ?? "").slice(0, 40)}"`;
  const body = node.body ?? {};
  if (
    !node.label &&
    !(typeof body.name === "string" && body.name) &&
    !(typeof body.kernel === "string" && body.kernel)
  ) {
    const where = scopeOf(node);
    return `an unnamed ${kind}${where ? ` in ${where}` : ""}`;
  }
  return nodeTitle(node, find);
}

/**
 * Which node a version's canvas centres on for a change (issue 35: each change located on both
 * canvases): the node itself where that version holds it, else the first neighbour (by the
 * ``edges`` of the version that holds it) that this version holds too: an added operation's
 * input, a removed one's input. Null when neither is in it.
 */
export function shownAt(
  id: string,
  holds: (id: string) => boolean,
  edges: readonly { from: string; to: string }[],
): string | null {
  if (holds(id)) return id;
  for (const e of edges) {
    if (e.to === id && holds(e.from)) return e.from;
    if (e.from === id && holds(e.to)) return e.to;
  }
  return null;
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
export function changeRows(
  diff: VersionDiff,
  before: LoomDocument | null,
  after: LoomDocument | null,
): ChangeRow[] {
  const [had, has] = [before, after].map((d) =>
    d ? nodeById(d) : new Map<string, LoomNode>(),
  ) as [Map<string, LoomNode>, Map<string, LoomNode>];
  const rows: ChangeRow[] = [
    ...diff.added.map((id) => ({
      id,
      status: "added" as const,
      name: titleIn(id, has),
      fields: [],
      moved: false,
    })),
    ...diff.removed.map((id) => ({
      id,
      status: "removed" as const,
      name: titleIn(id, had),
      fields: [],
      moved: false,
    })),
    ...diff.changed.map((c) => {
      const fields = [...new Set(c.fields.map(fieldName))];
      return {
        id: c.id,
        status: "changed" as const,
        name: titleIn(c.id, has, had),
        fields,
        moved: fields.every((f) => f === "Layout"),
      };
    }),
  ];
  return rows.sort((a, b) => Number(a.moved) - Number(b.moved));
}

/** The colour of each status on the canvas and in the legend. */
export const STATUS_COLORS: Record<Status, string> = {
  added: "#1f9d55",
  removed: "#d64545",
  changed: "#d9911a",
};

/** The edges of the version after that the version before lacks (added) and the reverse
 * (removed), each as "from->to" of the node ids. */
export function edgeChanges(
  before: readonly { from: string; to: string }[],
  after: readonly { from: string; to: string }[],
): { added: Set<string>; removed: Set<string> } {
  const key = (e: { from: string; to: string }) => `${e.from}->${e.to}`;
  const had = new Set(before.map(key));
  const has = new Set(after.map(key));
  return {
    added: new Set([...has].filter((k) => !had.has(k))),
    removed: new Set([...had].filter((k) => !has.has(k))),
  };
}
