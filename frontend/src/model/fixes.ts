// One-click fixes for checker issues (issue 19). ``castAxesFix`` answers an AccidentalBroadcast
// warning: a cast_axes operation relabels the operand's axis ``fromAxis`` as ``toAxis`` (no data
// moves), the elementwise operation reads the relabelled tensor instead, and every operation
// downstream is re-derived — all as the ops of ONE edit, so one undo takes it back. The issue's
// ``params`` (from geon/core/checks/broadcasting.py) say what to do: operationId, operand (the
// IO key), position, tensorId, fromAxis, toAxis.

import { AuthorError } from "./author";
import { addOperation } from "./authorOperations";
import { deriveOperation, rederive } from "./derive";
import {
  LAYOUT,
  nodeById,
  OPERATION,
  selections,
  TENSOR,
  tensorAxes,
  tensorRange,
  type Issue,
  type LoomDocument,
  type Point,
} from "./document";
import { applyOps, type EditOp } from "./edits";

/** The constraint whose issues :func:`castAxesFix` fixes. */
export const ACCIDENTAL_BROADCAST = "AccidentalBroadcast";

/** What the fix reads from an issue's params. */
export interface CastFix {
  operationId: string;
  operand: string;
  position: number;
  tensorId: string;
  fromAxis: string;
  toAxis: string;
}

/** The cast the issue asks for, or null when the issue offers no cast_axes fix. */
export function castFixOf(issue: Issue): CastFix | null {
  if (issue.constraint !== ACCIDENTAL_BROADCAST || !issue.params) return null;
  const p = issue.params;
  const str = (k: string): string | null =>
    typeof p[k] === "string" && p[k] ? (p[k] as string) : null;
  const [operationId, operand, tensorId, fromAxis, toAxis] = [
    "operationId",
    "operand",
    "tensorId",
    "fromAxis",
    "toAxis",
  ].map(str);
  const position = typeof p.position === "number" ? p.position : 0;
  if (!operationId || !operand || !tensorId || !fromAxis || !toAxis) return null;
  return { operationId, operand, position, tensorId, fromAxis, toAxis };
}

/**
 * The ops of one edit that insert ``cast_axes`` before the operation the issue names: the
 * operand's ``fromAxis`` becomes ``toAxis``. Throws AuthorError naming what is missing when the
 * document no longer matches the issue (the operation or tensor was changed meanwhile).
 */
export function castAxesFix(
  doc: LoomDocument,
  issue: Issue,
): { ops: EditOp[]; castId: string; output: string } {
  const fix = castFixOf(issue);
  if (!fix) throw new AuthorError(`the issue "${issue.summary}" offers no cast_axes fix`);
  const nodes = nodeById(doc);
  const op = nodes.get(fix.operationId);
  const tensor = nodes.get(fix.tensorId);
  if (!op || op.type !== OPERATION)
    throw new AuthorError("the operation this issue is about is gone; check again");
  if (!tensor || tensor.type !== TENSOR)
    throw new AuthorError("the operand this issue is about is gone; check again");
  const name = tensor.label ?? "operand";
  const axes = tensorAxes(tensor) ?? [];
  if (!axes.includes(fix.fromAxis))
    throw new AuthorError(`"${name}" has no axis ${fix.fromAxis} any more; check again`);
  if (axes.includes(fix.toAxis))
    throw new AuthorError(
      `"${name}" already has axis ${fix.toAxis}; cannot relabel ${fix.fromAxis} as it`,
    );
  const reads = selections(op.body.inputs).get(fix.operand) ?? [];
  if (reads[fix.position]?.tensorId !== fix.tensorId)
    throw new AuthorError(
      `${String(op.body.kernel)} no longer reads "${name}" as ${fix.operand}; check again`,
    );
  // 1. a cast_axes reading the operand, placed between it and the operation
  const at = (tensor.tags?.[LAYOUT] ?? op.tags?.[LAYOUT]) as Point | undefined;
  const added = addOperation(
    doc,
    "op:cast_axes",
    at ? { x: at.x + 120, y: at.y + 60 } : undefined,
    [fix.tensorId],
  );
  let ops: EditOp[] = [...added.ops];
  let current = applyOps(doc, ops);
  // 2. its params: the operand's axes with fromAxis relabelled; its output follows
  const relabelled = axes.map((a) => (a === fix.fromAxis ? fix.toAxis : a));
  const params: EditOp[] = [
    { op: "update_node", id: added.id, body: { params: { axes: relabelled } } },
  ];
  current = applyOps(current, params);
  const derived = deriveOperation(current, added.id);
  if (derived.inference.kind !== "ok" || !derived.output) {
    const why =
      derived.inference.kind === "error"
        ? derived.inference.message
        : "its output cannot be derived";
    throw new AuthorError(`cannot cast "${name}" to (${relabelled.join(", ")}): ${why}`);
  }
  ops = [...ops, ...params, ...derived.ops];
  current = applyOps(current, derived.ops);
  const output = derived.output;
  const label: EditOp[] = [{ op: "update_node", id: output, label: `${name} as ${fix.toAxis}` }];
  current = applyOps(current, label);
  // 3. the operation reads the relabelled tensor instead, and everything downstream follows
  const outNode = nodeById(current).get(output);
  const rewired = reads.map((s, i) =>
    i === fix.position ? { tensorId: output, range: tensorRange(outNode) ?? s.range } : s,
  );
  const rewire: EditOp[] = [
    { op: "update_node", id: fix.operationId, body: { inputs: { [fix.operand]: rewired } } },
  ];
  current = applyOps(current, rewire);
  ops = [...ops, ...label, ...rewire, ...rederive(current, [output])];
  return { ops, castId: added.id, output };
}
