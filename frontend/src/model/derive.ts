// Deriving an operation from its inputs: what its kernel infers, the output tensor it then has
// (created, labelled from its operands, or resized), its selections and derived tags, and the
// re-derivation downstream when a tensor changes. Pure functions of the document, returning edit
// ops; the commands (authorAxes.ts, authorTensors.ts, authorOperations.ts) call them.

import { refLength, type Declared } from "./axes";
import { inferAxes } from "./infer/dispatch";
import { deriveSelections, deriveSignature, type Inference } from "./infer/inference";
import { CATALOGUE } from "./catalogue";
import {
  declaredAxes,
  INDEX_AXES,
  IPF_INDEX,
  IPF_SIGNATURE,
  LAYOUT,
  nodeById,
  OPERATION,
  selections,
  TENSOR,
  TENSOR_AXES,
  tensorAxes,
  tensorRange,
  type LoomDocument,
  type LoomNode,
  type Point,
  type Range,
  type Selection,
} from "./document";
import { applyOps, type EditOp } from "./edits";
import { uuid } from "./author";

export function rangeFor(axes: string[], declared: Declared, start?: number[]): Range | null {
  const lengths = axes.map((a) => {
    try {
      return refLength(a, declared);
    } catch {
      return null;
    }
  });
  if (lengths.some((l) => l === null)) return null;
  const s = start && start.length === axes.length ? start : axes.map(() => 0);
  return { start: s, end: s.map((x, i) => x + lengths[i]!) };
}
/** Infix symbols of the kernels whose results read best as a formula. */
const INFIX: Record<string, string> = {
  "op:dot": "·",
  "op:add": "+",
  "op:subtract": "-",
  "op:multiply": "*",
  "op:divide": "/",
};

/** ``base``, or ``base 2``, ``base 3``... : the first label no node of ``doc`` has. */
export function uniqueLabel(doc: LoomDocument, base: string): string {
  const taken = new Set(doc.nodes.map((n) => n.label));
  if (!taken.has(base)) return base;
  for (let i = 2; ; i++) if (!taken.has(`${base} ${i}`)) return `${base} ${i}`;
}

/** A new operation output's label, from its operands' labels: "x·w1", "a+b", "relu(h)",
 * "sum(x)" (a long one falls back to "dot_out"), unique in ``doc``. */
export function outputLabel(
  doc: LoomDocument,
  kernel: string,
  operands: readonly string[],
): string {
  const short = kernel.replace(/^op:/, "");
  const symbol = INFIX[kernel];
  const formula =
    symbol && operands.length >= 2 ? operands.join(symbol) : `${short}(${operands.join(", ")})`;
  return uniqueLabel(doc, formula.length <= 32 ? formula : `${short}_out`);
}
/** What ``kernel`` infers for an operation's current inputs (the "missing input" errors included). */
export function inferOperation(doc: LoomDocument, op: LoomNode): Inference {
  const nodes = nodeById(doc);
  const inputs: Record<string, string[][]> = {};
  for (const [key, list] of selections(op.body.inputs)) {
    inputs[key] = list.map((s) => tensorAxes(nodes.get(s.tensorId)) ?? []);
  }
  return inferAxes(CATALOGUE, String(op.body.kernel), inputs, op.body.params, declaredAxes(doc));
}

function complete(op: LoomNode): boolean {
  const k = CATALOGUE.get(String(op.body.kernel));
  if (!k) return false;
  const inputs = selections(op.body.inputs);
  return k.inputs.every(
    (key) => k.optional.includes(key) || (inputs.get(key)?.length ?? 0) > (k.variadic ? 1 : 0),
  );
}

export const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);

/**
 * The ops that bring an operation's output tensor and derived tags in line with its inputs: the
 * output has the inferred axes, IndexAxes, IPFIndex and IPFSignature are the derived ones (as
 * geon.core.ops derives them: offsets from the tensors' range starts), and each selection is
 * what the op reads or writes (ops.py ``Inference.selections``, as the builder writes it): the
 * whole tensor for most kernels, a slice's window. Until inference succeeds the selections
 * cover the whole input tensors and nothing else changes (the server reports the issue).
 */
export function deriveOperation(
  doc: LoomDocument,
  opId: string,
): { ops: EditOp[]; inference: Inference; output?: string } {
  const nodes = nodeById(doc);
  const op = nodes.get(opId)!;
  const ops: EditOp[] = [];
  const held: Record<string, Selection[]> = {};
  const inputs: Record<string, Selection[]> = {};
  for (const [key, list] of selections(op.body.inputs)) {
    held[key] = list.map((s) => ({ tensorId: s.tensorId, range: s.range }));
    inputs[key] = list.map((s) => ({
      tensorId: s.tensorId,
      range: tensorRange(nodes.get(s.tensorId)) ?? s.range,
    }));
  }
  const select = (want: Record<string, Selection[]>): void => {
    if (!same(want, held)) ops.unshift({ op: "update_node", id: opId, body: { inputs: want } });
  };
  if (!complete(op)) {
    select(inputs);
    return { ops, inference: { kind: "server" } };
  }
  const inference = inferOperation(doc, op);
  if (inference.kind !== "ok") {
    select(inputs);
    return { ops, inference };
  }
  const declared = declaredAxes(doc);
  const current = (selections(op.body.outputs).get("result") ?? [])[0];
  const outNode = current ? nodes.get(current.tensorId) : undefined;
  const outRange = rangeFor(
    inference.result,
    declared,
    outNode ? tensorRange(outNode)?.start : undefined,
  );
  const extent = inference.index.map((r) => refLength(r, declared));
  if (!outRange || extent.some((n) => n === null)) {
    select(inputs);
    return { ops, inference };
  }
  // the operands in the kernel's order (x before y whatever order the document lists them in)
  const seen = new Map<string, number>();
  const read = inference.operands.map((o) => {
    const pos = seen.get(o.key) ?? 0;
    seen.set(o.key, pos + 1);
    return inputs[o.key]![pos]!;
  });
  let outId = outNode?.id;
  if (!outNode) {
    outId = uuid();
    const label = outputLabel(
      doc,
      String(op.body.kernel),
      read.map((s) => nodes.get(s.tensorId)?.label ?? "?"),
    );
    const dtype = String(
      nodes.get(Object.values(inputs)[0]?.[0]?.tensorId ?? "")?.body.dtype ?? "float32",
    );
    const tags: Record<string, unknown> = { [TENSOR_AXES]: { axes: inference.result } };
    const at = op.tags?.[LAYOUT] as Point | undefined;
    if (at) tags[LAYOUT] = { x: at.x + 200, y: at.y };
    ops.push({
      op: "add_node",
      node: { id: outId, type: TENSOR, label, body: { dtype, range: outRange }, tags },
    });
  } else if (
    !same(tensorAxes(outNode), inference.result) ||
    !same(tensorRange(outNode), outRange)
  ) {
    ops.push({
      op: "update_node",
      id: outNode.id,
      body: { range: outRange },
      tags: { [TENSOR_AXES]: { axes: inference.result } },
    });
  }
  const ranges = [...read.map((s) => s.range), outRange];
  const signature = deriveSignature(
    inference,
    declared,
    ranges.map((r) => r.start),
  );
  const windows = deriveSelections(signature, extent as number[], ranges);
  const want: Record<string, Selection[]> = {};
  for (const key of Object.keys(inputs)) want[key] = [];
  read.forEach((s, i) =>
    want[inference.operands[i]!.key]!.push({ tensorId: s.tensorId, range: windows[i]! }),
  );
  select(want);
  const tags = {
    [INDEX_AXES]: { axes: inference.index },
    [IPF_INDEX]: { start: inference.index.map(() => 0), end: extent },
    [IPF_SIGNATURE]: signature,
  };
  const outputs = { result: [{ tensorId: outId!, range: windows[windows.length - 1]! }] };
  const opTags = op.tags ?? {};
  if (
    !same(outputs, op.body.outputs) ||
    Object.entries(tags).some(([k, v]) => !same(opTags[k], v))
  ) {
    ops.push({ op: "update_node", id: opId, body: { outputs }, tags });
  }
  return { ops, inference, output: outId };
}

/** Re-derive every operation downstream of the changed tensors, in data-flow order. */
export function rederive(doc: LoomDocument, changed: string[]): EditOp[] {
  const ops: EditOp[] = [];
  let current = doc;
  const queue = [...changed];
  const done = new Set<string>();
  while (queue.length) {
    const tensorId = queue.shift()!;
    for (const op of current.nodes) {
      if (op.type !== OPERATION || done.has(op.id)) continue;
      const reads = [...selections(op.body.inputs).values()].some((list) =>
        list.some((s) => s.tensorId === tensorId),
      );
      if (!reads) continue;
      done.add(op.id);
      const derived = deriveOperation(current, op.id);
      if (derived.ops.length) {
        ops.push(...derived.ops);
        current = applyOps(current, derived.ops);
        if (derived.output) queue.push(derived.output);
      }
    }
  }
  return ops;
}
