// How each operand of an operation reads the op's index space (geon.core.ops.Dim), and what an
// inference rule derives: the result axes, the index axes and the dims per operand. The rules of
// infer/elementwise.ts, infer/views.ts and infer/conv2d.ts build these; infer/signature.ts turns
// them into the IPFSignature (DESIGN.md §4).

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
export const follows = (col: number, coef = 1, offset = 0): Dim => ({ terms: [[col, coef]], offset });
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
