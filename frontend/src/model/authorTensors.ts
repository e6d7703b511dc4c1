// Authoring tensors: parse and check a tensor's axes, add a tensor, give it other axes, as edit
// ops (author.ts says how commands are written and refused).

import { baseNames, canonical } from "./axes";
import { InferenceError } from "./infer/messages";
import {
  declaredAxes,
  LAYOUT,
  nodeById,
  TENSOR,
  TENSOR_AXES,
  tensorRange,
  type LoomDocument,
  type LoomNode,
  type Point,
} from "./document";
import { applyOps, type EditOp } from "./edits";
import { AuthorError, q, uuid } from "./author";
import { rangeFor, rederive } from "./derive";

// --- tensors ----------------------------------------------------------------------------------
/** Parse "H, W-1" into canonical references, each declared with a length. */
export function checkTensorAxes(doc: LoomDocument, refs: string[]): string[] {
  const declared = declaredAxes(doc);
  const out: string[] = [];
  for (const text of refs) {
    let ref: string;
    try {
      ref = canonical(text);
    } catch (e) {
      throw new AuthorError((e as InferenceError).message);
    }
    for (const name of baseNames(ref)) {
      const axis = declared.get(name);
      if (!axis)
        throw new AuthorError(
          `axis "${name}" is not declared; expected one of ${q(declared.keys())}, or declare it in the axes panel`,
        );
      if (axis.length === null)
        throw new AuthorError(
          `axis "${name}" has no length yet; give it one in the axes panel before a tensor uses it`,
        );
    }
    if (out.includes(ref))
      throw new AuthorError(
        `axis "${ref}" appears twice in (${refs.join(", ")}); the axes of a tensor are duplicate-free`,
      );
    out.push(ref);
  }
  return out;
}

export function splitRefs(text: string): string[] {
  return text
    .split(/[,\s]+/)
    .map((s) => s.trim())
    .filter(Boolean);
}

export interface TensorInput {
  label: string;
  axes: string[];
  dtype?: string;
  at?: Point;
}

export function addTensor(doc: LoomDocument, input: TensorInput): { ops: EditOp[]; id: string } {
  const axes = checkTensorAxes(doc, input.axes);
  const range = rangeFor(axes, declaredAxes(doc))!;
  const id = uuid();
  const tags: Record<string, unknown> = { [TENSOR_AXES]: { axes } };
  if (input.at) tags[LAYOUT] = { x: Math.round(input.at.x), y: Math.round(input.at.y) };
  const node: LoomNode = {
    id,
    type: TENSOR,
    body: { dtype: input.dtype ?? "float32", range },
    tags,
  };
  if (input.label.trim()) node.label = input.label.trim();
  return { ops: [{ op: "add_node", node }], id };
}

/** Give a tensor other axes: its range follows, and so do the operations that read it. */
export function setTensorAxes(doc: LoomDocument, id: string, refs: string[]): EditOp[] {
  const node = nodeById(doc).get(id);
  if (!node || node.type !== TENSOR) throw new AuthorError(`node "${id}" is not a tensor`);
  const axes = checkTensorAxes(doc, refs);
  const range = rangeFor(axes, declaredAxes(doc), tensorRange(node)?.start)!;
  const ops: EditOp[] = [
    { op: "update_node", id, body: { range }, tags: { [TENSOR_AXES]: { axes } } },
  ];
  return [...ops, ...rederive(applyOps(doc, ops), [id])];
}
