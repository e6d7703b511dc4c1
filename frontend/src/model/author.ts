// Authoring: what each user command changes in the document, as edit ops (one list per user
// action, so one action is one undo step). Pure functions of the document; a command that cannot
// apply throws an AuthorError that names the bad value and says what would be valid, and nothing
// is sent.

// This module holds what every command shares (the refusal, ids) and the general commands (move,
// rename, delete); the axes, tensors and operations panels' commands are in authorAxes.ts,
// authorTensors.ts and authorOperations.ts, and deriving an operation's output from its inputs is
// derive.ts.

import { baseNames } from "./axes";
import {
  APPLICATION,
  AXIS,
  LAYOUT,
  nodeById,
  OPERATION,
  selections,
  TENSOR,
  tensorAxes,
  type LoomDocument,
  type Point,
  type Selection,
} from "./document";
import { applyOps, type EditOp } from "./edits";

/** A command that cannot apply; like the server's refusal of such an edit, an ``invalid_edit``. */
export class AuthorError extends Error {
  readonly code = "invalid_edit";
}

export const q = (items: Iterable<string>): string =>
  `(${[...items].map((i) => `"${i}"`).join(", ")})`;

/** A random UUID, also where crypto.randomUUID is missing (plain http on a non-local host). */
export function uuid(): string {
  if (typeof crypto.randomUUID === "function") return crypto.randomUUID();
  const b = crypto.getRandomValues(new Uint8Array(16));
  b[6] = (b[6]! & 0x0f) | 0x40;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const h = [...b].map((x) => x.toString(16).padStart(2, "0")).join("");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}
export function safeBase(ref: string): string[] {
  try {
    return baseNames(ref);
  } catch {
    return [];
  }
}

// --- general ----------------------------------------------------------------------------------

export function moveNodes(doc: LoomDocument, positions: Map<string, Point>): EditOp[] {
  const nodes = nodeById(doc);
  return [...positions]
    .filter(([id]) => nodes.has(id))
    .map(([id, p]) => ({
      op: "update_node",
      id,
      tags: { [LAYOUT]: { x: Math.round(p.x), y: Math.round(p.y) } },
    }));
}

export function renameNode(doc: LoomDocument, id: string, label: string): EditOp[] {
  if (!nodeById(doc).has(id)) throw new AuthorError(`node "${id}" does not exist`);
  return [{ op: "update_node", id, label: label.trim() || null }];
}

/**
 * Delete nodes. A deleted tensor leaves the operations that read or write it; a deleted
 * operation takes its applications along; a deleted axis must be unused.
 */
export function deleteNodes(doc: LoomDocument, ids: string[]): EditOp[] {
  const nodes = nodeById(doc);
  const gone = new Set(ids.filter((id) => nodes.has(id)));
  for (const n of doc.nodes)
    if (n.type === APPLICATION && gone.has(String(n.body.operationId))) gone.add(n.id);
  const ops: EditOp[] = [];
  let current = doc;
  for (const id of gone) {
    const n = nodes.get(id)!;
    if (n.type === AXIS) {
      const stillUsed = current.nodes.filter(
        (t) =>
          t.type === TENSOR &&
          !gone.has(t.id) &&
          (tensorAxes(t) ?? []).some((a) => safeBase(a).includes(String(n.body.name))),
      );
      if (stillUsed.length)
        throw new AuthorError(
          `axis "${String(n.body.name)}" is used by ${q(stillUsed.map((u) => u.label ?? u.id))}; change or delete those tensors first`,
        );
    }
  }
  for (const op of doc.nodes) {
    if (op.type !== OPERATION || gone.has(op.id)) continue;
    const patch: Record<string, unknown> = {};
    for (const side of ["inputs", "outputs"] as const) {
      const sel = selections(op.body[side]);
      const kept: Record<string, Selection[] | null> = {};
      let changed = false;
      for (const [key, list] of sel) {
        const left = list.filter((s) => !gone.has(s.tensorId));
        if (left.length !== list.length) {
          changed = true;
          kept[key] = left.length ? left : null;
        }
      }
      if (changed) patch[side] = kept;
    }
    if (Object.keys(patch).length) ops.push({ op: "update_node", id: op.id, body: patch });
  }
  current = applyOps(current, ops);
  // referrers go first (issue 36): an application before its operation, an operation before
  // the tensors it reads and writes, so the server never sees a node removed while a node
  // not yet removed still names it; one edit, undone as one
  const rank = (id: string): number => {
    const type = nodes.get(id)!.type;
    return type === APPLICATION
      ? 0
      : type === OPERATION
        ? 1
        : type === TENSOR
          ? 3
          : type === AXIS
            ? 4
            : 2;
  };
  for (const id of [...gone].sort((a, b) => rank(a) - rank(b))) ops.push({ op: "remove_node", id });
  return ops;
}
