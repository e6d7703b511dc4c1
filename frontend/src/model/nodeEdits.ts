// The ops of the editor's forms (DESIGN.md §6 edit ops): the inspector's tensor and operation
// fields, the projection window's commit and "lay out again". Like author.ts, pure functions of
// the document that return one user action's ops, or throw an AuthorError saying why not.

import { AuthorError } from "./author";
import { setTensorAxes } from "./authorTensors";
import { rederive } from "./derive";
import { LAYOUT, nodeById, selections, tensorAxes, type LoomDocument } from "./document";
import { applyOps, type EditOp } from "./edits";
import type { IPF } from "./ipf";
import { commitOps, operationProjection } from "./projection";

/** A label as typed: surrounding blanks dropped; an empty one removes the label. */
function labelOps(doc: LoomDocument, id: string, label: string): EditOp[] {
  const node = nodeById(doc).get(id)!;
  return (node.label ?? "") === label.trim()
    ? []
    : [{ op: "update_node", id, label: label.trim() || null }];
}

/** The inspector's tensor fields: label, dtype, then the axes (a positional loom tensor keeps having none while the field stays empty). */
export function editTensor(
  doc: LoomDocument,
  id: string,
  label: string,
  axes: string[],
  dtype: string,
): EditOp[] {
  const node = nodeById(doc).get(id)!;
  const ops = labelOps(doc, id, label);
  if (node.body.dtype !== dtype) ops.push({ op: "update_node", id, body: { dtype } });
  const now = applyOps(doc, ops);
  const unchanged =
    tensorAxes(node) === null
      ? axes.length === 0
      : JSON.stringify(tensorAxes(node)) === JSON.stringify(axes);
  if (!unchanged) ops.push(...setTensorAxes(now, id, axes));
  return ops;
}

/** The inspector's operation fields: label and params, then the operation derived again from its first input. */
export function editOperation(
  doc: LoomDocument,
  id: string,
  label: string,
  params: unknown,
): EditOp[] {
  const node = nodeById(doc).get(id)!;
  const ops = labelOps(doc, id, label);
  if (JSON.stringify(node.body.params ?? null) !== JSON.stringify(params))
    ops.push({ op: "update_node", id, body: { params } });
  const now = applyOps(doc, ops);
  const inputs = [...selections(nodeById(now).get(id)!.body.inputs).values()]
    .flat()
    .map((s) => s.tensorId);
  return [...ops, ...rederive(now, inputs.slice(0, 1))];
}

/** The projection window's drafts for a custom kernel's operation, as ops. */
export function editProjection(
  doc: LoomDocument,
  opId: string,
  drafts: ReadonlyMap<string, IPF>,
): EditOp[] {
  const view = operationProjection(doc, opId);
  if (!view) throw new AuthorError(`operation "${opId}" no longer exists`);
  if (!view.custom)
    throw new AuthorError(
      `kernel "${view.kernel}" is in the catalogue: its projections are derived from the axes; expected a custom kernel`,
    );
  const ops = commitOps(doc, view, drafts);
  if (!ops.length)
    throw new AuthorError(
      "the projections are unchanged; edit a projection, offset or shape first",
    );
  return ops;
}

/** "Lay out again": the nodes among ``ids`` that carry a Layout tag lose it (the layout places them). */
export function clearLayout(doc: LoomDocument, ids: string[]): EditOp[] {
  const nodes = nodeById(doc);
  return ids
    .filter((id) => nodes.get(id)?.tags?.[LAYOUT])
    .map((id) => ({ op: "update_node", id, tags: { [LAYOUT]: null } }));
}
