// "Load into a run" (issue 36): a puzzle's counterexample made into what the run panel takes —
// the axis lengths of the failing draw (set on the graph as one undoable edit) and its inputs
// as an .npz named by label, each in the axis order of the student's own tensor.

import { tensorAxes, TENSOR, type LoomDocument } from "../model/document";
import type { NpyArray } from "./npz";

/** A counterexample's input (the checker's ``{"axes", "values"}``). */
export interface ShownInput {
  axes: string[];
  values: unknown;
}

function base(ref: string): string {
  return ref.split(/[-+]/)[0]!;
}

function shapeOf(values: unknown): number[] {
  const shape: number[] = [];
  let v = values;
  while (Array.isArray(v)) {
    shape.push(v.length);
    v = v[0];
  }
  return shape;
}

function flat(values: unknown): (number | boolean)[] {
  if (!Array.isArray(values))
    return [
      values === "nan"
        ? NaN
        : values === "inf"
          ? Infinity
          : values === "-inf"
            ? -Infinity
            : (values as number | boolean),
    ];
  return values.flatMap(flat);
}

/** The axis lengths and the arrays a run needs to replay the failing draw, or a sentence
 * saying why it cannot (an input too large to have been sent, or one the graph lacks). */
export function counterexampleRun(
  inputs: Record<string, ShownInput>,
  dtypes: Record<string, string>,
  doc: LoomDocument,
): { lengths: Record<string, number>; arrays: NpyArray[] } | string {
  const lengths: Record<string, number> = {};
  const arrays: NpyArray[] = [];
  for (const [label, shown] of Object.entries(inputs)) {
    if (shown.values === null || shown.values === undefined)
      return `input "${label}" was too large to send with the check; run the graph with a seed instead`;
    const shape = shapeOf(shown.values);
    if (shape.length !== shown.axes.length)
      return `input "${label}" does not hold its axes (${shown.axes.join(", ")})`;
    shown.axes.forEach((ref, d) => (lengths[base(ref)] = shape[d]!));
    const tensor = doc.nodes.find((n) => n.type === TENSOR && n.label === label);
    if (!tensor) return `your graph has no tensor "${label}" to feed`;
    const mine = tensorAxes(tensor) ?? shown.axes;
    const perm = mine.map((a) => shown.axes.indexOf(a));
    const values = flat(shown.values);
    const order = perm.some((p) => p < 0) ? shown.axes.map((_, d) => d) : perm;
    // C-order strides of the shown array; walk the new order's cells
    const strides = shape.map((_, d) => shape.slice(d + 1).reduce((p, n) => p * n, 1));
    const newShape = order.map((d) => shape[d]!);
    const out: (number | boolean)[] = [];
    const index = newShape.map(() => 0);
    for (let k = 0; k < values.length; k++) {
      out.push(values[index.reduce((at, i, j) => at + i * strides[order[j]!]!, 0)]!);
      for (let j = index.length - 1; j >= 0; j--) {
        if (++index[j]! < newShape[j]!) break;
        index[j] = 0;
      }
    }
    const dtype = (dtypes[label] ?? "float64") as NpyArray["dtype"];
    arrays.push({ name: label, dtype, shape: newShape, values: out });
  }
  return { lengths, arrays };
}
