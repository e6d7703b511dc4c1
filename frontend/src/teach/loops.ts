// The index loops of one operation (issue 19, item 1: "explain any operation"), from the same
// inference the checker uses (model/infer): the loop axes — the result's, then the ones summed or
// reduced over — and, for a chosen loop order, every step: the index by axis name, the cell read
// in each operand, the term, the accumulator and the cell written once it is complete. A conv2d
// reads its input through a window: the input's height at ``P·stride + R − padding`` (R the
// window's own loop), zero where that falls in the padding.

import type { Inference } from "../model/infer/inference";
import { baseNames } from "../model/axes";

/** Where an operand dim reads: Σ coefficient · index[axis] + offset (a plain dim: one axis, 1, 0). */
export interface Read {
  terms: [string, number][];
  offset: number;
}

/** How an operation combines what it reads. */
export type Combine = "sum" | "product-sum" | "max" | "min" | "prod" | "mean" | "apply";

export interface Loops {
  kernel: string;
  /** Every loop axis with its length: the result's axes first, then the contracted or reduced. */
  axes: { name: string; length: number; reduced: boolean }[];
  /** Per operand dim: the loop axis it follows (the window's outer one for a conv) and how it reads. */
  operands: {
    label: string;
    axes: string[];
    shape: number[];
    dims: (string | null)[];
    reads: Read[];
  }[];
  result: { label: string; axes: string[]; shape: number[] };
  combine: Combine;
}

export interface Step {
  index: Record<string, number>;
  /** The cell read in each operand (a conv's may lie in the padding: outside its shape, read as 0). */
  reads: number[][];
  values: number[];
  term: number;
  acc: number;
  /** The result cell the step adds to. */
  cell: number[];
  /** The result cell, when this step completes it. */
  writes: number[] | null;
}

/** The most steps a stepper plays (lengths beyond it are refused by name). */
export const MAX_STEPS = 4096;

const APPLY: Record<string, (v: number[]) => number> = {
  "op:add": (v) => v.reduce((a, b) => a + b, 0),
  "op:subtract": (v) => v[0]! - v[1]!,
  "op:multiply": (v) => v.reduce((a, b) => a * b, 1),
  "op:divide": (v) => v[0]! / v[1]!,
  "op:maximum": (v) => Math.max(...v),
  "op:minimum": (v) => Math.min(...v),
  "op:relu": (v) => Math.max(0, v[0]!),
  "op:negative": (v) => -v[0]!,
  "op:square": (v) => v[0]! * v[0]!,
  "op:transpose": (v) => v[0]!,
  "op:cast_axes": (v) => v[0]!,
  "op:broadcast": (v) => v[0]!,
  "op:dimshuffle": (v) => v[0]!,
};
const REDUCE: Record<string, Combine> = {
  "op:dot": "product-sum",
  "op:conv2d": "product-sum",
  "op:sum": "sum",
  "op:max": "max",
  "op:min": "min",
  "op:prod": "prod",
  "op:mean": "mean",
};

/** Whether the stepper explains this kernel. */
export function explains(kernel: string): boolean {
  return kernel in APPLY || kernel in REDUCE;
}

/** The loops of an inferred operation; ``length`` gives each axis reference's length. */
export function loopsOf(
  kernel: string,
  inf: Extract<Inference, { kind: "ok" }>,
  labels: string[],
  resultLabel: string,
  length: (ref: string) => number,
): Loops {
  if (!explains(kernel))
    throw new Error(
      `stepping through ${kernel} is not available yet; it explains dot, conv2d, elementwise operations, reductions, transpose, cast_axes and broadcast`,
    );
  const axes = inf.index.map((name) => ({ name, length: length(name), reduced: false }));
  /** The loop of a dim read whole (contracted, reduced, a window), added once. */
  const reducedLoop = (extent: string): string => {
    const name = baseNames(extent)[0]!;
    if (!axes.some((a) => a.name === name))
      axes.push({ name, length: length(extent), reduced: true });
    return name;
  };
  const operands = inf.operands.map((o, k) => {
    const reads = o.dims.map((d): Read => {
      const terms = d.terms.map(([col, coef]): [string, number] => [inf.index[col]!, coef]);
      // a dim with no index column, or a conv's window over one, also loops over its extent
      if (typeof d.extent === "string") terms.push([reducedLoop(d.extent), 1]);
      return { terms, offset: d.offset ?? 0 };
    });
    return {
      label: labels[k] ?? o.key,
      axes: o.axes,
      shape: o.axes.map(length),
      dims: reads.map((r) => r.terms[0]?.[0] ?? null),
      reads,
    };
  });
  return {
    kernel,
    axes,
    operands,
    result: { label: resultLabel, axes: inf.result, shape: inf.result.map(length) },
    combine: REDUCE[kernel] ?? "apply",
  };
}

/** Small whole numbers for the operands' cells (the same every time): operand k's cell f is (f + k) mod 5 + 1. */
export function sampleValue(operand: number, flat: number): number {
  return ((flat + operand) % 5) + 1;
}

function flat(index: number[], shape: number[]): number {
  return index.reduce((acc, i, d) => acc * shape[d]! + i, 0);
}

/** Operand ``k``'s sample value at ``cell`` of its ``shape``. */
export function valueAt(operand: number, cell: number[], shape: number[]): number {
  return sampleValue(operand, flat(cell, shape));
}

/** Every step in ``order`` (loop axis names, outermost first; default the loops' own order). */
export function steps(loops: Loops, order: string[] = loops.axes.map((a) => a.name)): Step[] {
  const byName = new Map(loops.axes.map((a) => [a.name, a]));
  const nested = order.map((n) => byName.get(n)!);
  const total = nested.reduce((n, a) => n * a.length, 1);
  if (total > MAX_STEPS) {
    throw new Error(
      `${total} steps (${nested.map((a) => `${a.name}=${a.length}`).join(", ")}) are too many to step through; the stepper plays at most ${MAX_STEPS}: make the axes shorter`,
    );
  }
  const reduced = loops.axes.filter((a) => a.reduced);
  const acc = new Map<number, { value: number; count: number }>();
  const out: Step[] = [];
  const at = nested.map(() => 0);
  for (let s = 0; s < total; s++) {
    const index: Record<string, number> = {};
    nested.forEach((a, i) => (index[a.name] = at[i]!));
    const reads = loops.operands.map((o) =>
      o.reads.map((r) => r.terms.reduce((at, [name, coef]) => at + coef * index[name]!, r.offset)),
    );
    const values = reads.map((r, k) =>
      inside(r, loops.operands[k]!.shape) ? valueAt(k, r, loops.operands[k]!.shape) : 0,
    );
    const cell = loops.result.axes.map((a) => index[a] ?? index[baseNames(a)[0]!] ?? 0);
    const key = flat(cell, loops.result.shape);
    const term =
      loops.combine === "product-sum"
        ? values.reduce((a, b) => a * b, 1)
        : loops.combine === "apply"
          ? APPLY[loops.kernel]!(values)
          : values[0]!;
    const before = acc.get(key);
    const value = before === undefined ? term : combineWith(loops.combine, before.value, term);
    const count = (before?.count ?? 0) + 1;
    acc.set(key, { value, count });
    const complete = reduced.every((a) => index[a.name] === a.length - 1);
    const shown = loops.combine === "mean" && complete ? value / count : value;
    out.push({ index, reads, values, term, acc: shown, cell, writes: complete ? cell : null });
    for (let i = nested.length - 1; i >= 0; i--) {
      at[i]! += 1;
      if (at[i]! < nested[i]!.length) break;
      at[i] = 0;
    }
  }
  return out;
}

/** Whether ``cell`` lies inside ``shape`` (a conv's padding does not). */
export function inside(cell: number[], shape: number[]): boolean {
  return cell.every((i, d) => i >= 0 && i < shape[d]!);
}

function combineWith(how: Combine, acc: number, term: number): number {
  if (how === "max") return Math.max(acc, term);
  if (how === "min") return Math.min(acc, term);
  if (how === "prod") return acc * term;
  return acc + term;
}
