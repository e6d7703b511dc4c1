// Edit operations of the websocket protocol (DESIGN.md §6) applied to a document, purely, and
// their inverses: what undo sends. update_node is a JSON merge (RFC 7396: null removes a key).

import type { LoomDocument, LoomNode } from "./document";

export type EditOp =
  | { op: "add_node"; node: LoomNode }
  | { op: "remove_node"; id: string; cascade?: boolean }
  | {
      op: "update_node";
      id: string;
      label?: string | null;
      body?: Record<string, unknown>;
      tags?: Record<string, unknown>;
    };

export class EditError extends Error {}

type Json = unknown;

const isObject = (v: Json): v is Record<string, Json> =>
  v !== null && typeof v === "object" && !Array.isArray(v);

/** RFC 7396 merge of ``patch`` into ``target`` (a new value; the inputs are not changed). */
export function mergePatch(target: Json, patch: Json): Json {
  if (!isObject(patch)) return structuredClone(patch);
  const out: Record<string, Json> = isObject(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

/** The patch that undoes ``patch`` applied to ``target``. */
export function inversePatch(target: Json, patch: Json): Json {
  if (!isObject(patch)) return target === undefined ? null : structuredClone(target);
  if (!isObject(target)) return target === undefined ? null : structuredClone(target);
  const out: Record<string, Json> = {};
  for (const [k, v] of Object.entries(patch)) {
    if (!(k in target)) out[k] = null;
    else if (isObject(v) && isObject(target[k])) out[k] = inversePatch(target[k], v);
    else out[k] = structuredClone(target[k]);
  }
  return out;
}

function applyOne(nodes: LoomNode[], op: EditOp): LoomNode[] {
  if (op.op === "add_node") {
    if (nodes.some((n) => n.id === op.node.id))
      throw new EditError(`node "${op.node.id}" already exists; expected a new id`);
    return [...nodes, structuredClone(op.node)];
  }
  const at = nodes.findIndex((n) => n.id === op.id);
  if (at < 0) throw new EditError(`node "${op.id}" does not exist`);
  if (op.op === "remove_node") return nodes.filter((n) => n.id !== op.id);
  const old = nodes[at]!;
  const next: LoomNode = { ...old };
  if (op.label !== undefined) {
    if (op.label === null) delete next.label;
    else next.label = op.label;
  }
  if (op.body !== undefined) next.body = mergePatch(old.body, op.body) as Record<string, unknown>;
  if (op.tags !== undefined) {
    const tags = mergePatch(old.tags ?? {}, op.tags) as Record<string, unknown>;
    if (Object.keys(tags).length) next.tags = tags;
    else delete next.tags;
  }
  const out = [...nodes];
  out[at] = next;
  return out;
}

/** ``doc`` with every op applied, in order; throws EditError (and changes nothing) when one cannot apply. */
export function applyOps(doc: LoomDocument, ops: readonly EditOp[]): LoomDocument {
  let nodes = doc.nodes;
  for (const op of ops) nodes = applyOne(nodes, op);
  return { ...doc, nodes };
}

/** The ops that undo ``ops`` applied to ``doc`` (in the order to send them). */
export function invertOps(doc: LoomDocument, ops: readonly EditOp[]): EditOp[] {
  const inverse: EditOp[] = [];
  let nodes = doc.nodes;
  for (const op of ops) {
    if (op.op === "add_node") inverse.push({ op: "remove_node", id: op.node.id });
    else {
      const old = nodes.find((n) => n.id === op.id);
      if (!old) throw new EditError(`node "${op.id}" does not exist`);
      if (op.op === "remove_node") inverse.push({ op: "add_node", node: structuredClone(old) });
      else {
        const back: EditOp = { op: "update_node", id: op.id };
        if (op.label !== undefined) back.label = old.label ?? null;
        if (op.body !== undefined)
          back.body = inversePatch(old.body, op.body) as Record<string, unknown>;
        if (op.tags !== undefined)
          back.tags = inversePatch(old.tags ?? {}, op.tags) as Record<string, unknown>;
        inverse.push(back);
      }
    }
    nodes = applyOne(nodes, op);
  }
  return inverse.reverse();
}
