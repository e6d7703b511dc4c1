// What inference derives for one operation (DESIGN.md §4; geon.core.ops.inference): how each
// operand's dims read the op's index space (Dim), the result of a rule (Derived, Inference), and
// how they become the IPFSignature — one IPF per operand and for the result — and the region each
// one selects of its tensor. The rules of infer/arithmetic.ts, infer/views.ts and infer/conv.ts
// build the dims; the projection and clip arithmetic is model/ipf.ts's (IPF.range, selectionOf):
// this module only lays out the rows.

import { refLength, type Declared } from "../axes";
import { IPF, selectionOf, ShapeError, ZRange, type IpfJson, type SignatureJson } from "../ipf";
import type { ErrorType } from "./messages";

type Range = { start: number[]; end: number[] };

/**
 * How one operand dim reads the op's index space (geon.core.ops.Dim): ``terms`` are (index
 * column, coefficient) pairs (1, a slice step, a conv stride); ``merged`` is a composite dim
 * merged row-major from (index column, part reference); ``offset`` counts from the tensor's
 * range start (a slice start, minus a pad width or conv padding); ``extent`` is the ``shape``
 * entry, a number or the reference whose length it is (a contracted or reduced dim, a window).
 */
export interface Dim {
  terms: [number, number][];
  merged?: [number, string][];
  offset?: number;
  extent?: number | string;
}

/** A dim that follows index column ``col`` with coefficient ``coef``. */
export const follows = (col: number, coef = 1, offset = 0): Dim => ({
  terms: [[col, coef]],
  offset,
});
/** A dim read whole, with no index column (contracted, reduced, a conv channel). */
export const whole = (ref: string): Dim => ({ terms: [], extent: ref });
/** ``n`` dims, each following its own index column. */
export const identity = (n: number): Dim[] => Array.from({ length: n }, (_, i) => follows(i));

/** Result axes, the index axes when they are not the result's (flatten), per operand (in IO-key
 * order) its dims, and the result's dims when they are not the identity. */
export interface Derived {
  result: string[];
  index?: string[];
  dims: Dim[][];
  output?: Dim[];
}

/** One operand of an inferred operation: its IO key, its axes and how its dims read the index. */
export interface OperandDims {
  key: string;
  axes: string[];
  dims: Dim[];
}

/** What inferAxes answers: the derivation, the error the server would report, or "server"
 * when the client leaves the kernel to the server. */
export type Inference =
  | { kind: "ok"; result: string[]; index: string[]; operands: OperandDims[]; output: Dim[] }
  | { kind: "error"; type: ErrorType; message: string }
  | { kind: "server" };

/** ops/inference.py access_json: one operand's IPF from its dims, its tensor's range start and the rank. */
function access(
  dims: Dim[],
  start: number[],
  rank: number,
  size: (ref: string) => number,
): IpfJson {
  const projection: number[][] = [];
  const offset: number[] = [];
  const shape: number[] = [];
  dims.forEach((d, i) => {
    const row = new Array<number>(rank).fill(0);
    for (const [col, coef] of d.terms) row[col]! += coef;
    let stride = 1;
    for (const [col, part] of [...(d.merged ?? [])].reverse()) {
      row[col]! += stride;
      stride *= size(part);
    }
    projection.push(row);
    offset.push((start[i] ?? 0) + (d.offset ?? 0));
    shape.push(typeof d.extent === "string" ? size(d.extent) : (d.extent ?? 1));
  });
  return { affineMap: { projection, offset }, shape };
}

/**
 * The derived IPFSignature (DESIGN.md §4, ops/inference.py ``Inference.signature``): a dim that follows
 * index column ``c`` has its coefficient there (1, a slice step, a conv stride); a contracted or
 * reduced dim is a zero row whose shape is its full length; a composite dim merges its parts'
 * columns row-major; the offset is the tensor's range start plus slice starts, minus pad widths
 * and conv padding; a conv window's shape is the window's length. ``starts`` are the operand
 * tensors' range starts in order, then the result's (zeros when absent); ``size`` gives a
 * reference's length (default: the declared one, 1 while unbound).
 */
export function deriveSignature(
  inf: { index: string[]; operands: OperandDims[]; output: Dim[] },
  declared: Declared,
  starts?: number[][],
  size: (ref: string) => number = (ref) => refLength(ref, declared) ?? 1,
): SignatureJson {
  const rank = inf.index.length;
  const sig: SignatureJson = { inputs: {}, outputs: {} };
  inf.operands.forEach((op, i) => {
    (sig.inputs[op.key] ??= []).push(access(op.dims, starts?.[i] ?? [], rank, size));
  });
  sig.outputs.result = [access(inf.output, starts?.[inf.operands.length] ?? [], rank, size)];
  return sig;
}

/**
 * The region each operand reads or writes (ops/inference.py ``Inference.selections``): the projection of
 * the whole index range ``[0, extent)`` through its IPF, a read clipped to the tensor's range
 * (selectionOf). For most kernels it is the whole tensor; for a slice it is the sliced window; a
 * pad reads its whole (smaller) input. ``ranges`` are the operand tensors' ranges in order, then
 * the result's. A document the checker refuses (an axis of length < 1, a tensor range that ends
 * before it starts) has no projection: such an operand keeps its tensor's range.
 */
export function deriveSelections(sig: SignatureJson, extent: number[], ranges: Range[]): Range[] {
  const reads = Object.values(sig.inputs)
    .flat()
    .map((entry) => ({ entry, read: true }));
  const writes = (sig.outputs.result ?? []).map((entry) => ({ entry, read: false }));
  return [...reads, ...writes].map(({ entry, read }, k) => {
    const tensor = ranges[k]!;
    try {
      return selectionOf(IPF.fromJson(entry), ZRange.fromShape(extent), ZRange.fromJson(tensor), {
        read,
      }).toJson();
    } catch (e) {
      if (e instanceof ShapeError) return { start: [...tensor.start], end: [...tensor.end] };
      throw e;
    }
  });
}
