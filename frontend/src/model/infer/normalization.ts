// The inference rules of the normalization family (DESIGN.md §2, §4; geon.core.ops.normalization,
// docs/kernels.md): op:softmax and op:layer_norm normalise their operand over params.reduction_axes
// (required, at least one) and keep its axes. Every application needs the whole of each
// normalised axis, so those axes are not index axes: the index is the operand's other axes, and
// the normalised dims of the operand and of the result are read whole (a zero row of full
// shape), which is what makes a split over them impossible. layer_norm's optional scale and bias
// have exactly the normalised axes, in any order, and epsilon is a positive number (1e-05).

import { whole, follows, type Derived, type Dim } from "./inference";
import { fail, pyRepr, quoted } from "./messages";
import { axesOfInput, noDups, only, type Resolver } from "./params";

/** The normalised axes: params.reduction_axes, each once, each an axis of the input. */
function normalizedAxes(
  kname: string,
  a: string[],
  p: Record<string, unknown>,
  res: Resolver,
): string[] {
  const what = `${kname} reduction_axes`;
  if (!("reduction_axes" in p)) {
    fail(
      "KernelError",
      `${kname} needs params "reduction_axes"; expected a list of the axes to normalise over, from ${quoted(a)}`,
    );
  }
  const refs = res.refs(p.reduction_axes, what);
  if (refs.length === 0)
    fail("KernelError", `${what} is empty; expected at least one axis from ${quoted(a)}`);
  noDups(refs, what);
  axesOfInput(refs, a, what);
  return refs;
}

function checkEpsilon(p: Record<string, unknown>): void {
  const value = "epsilon" in p ? p.epsilon : 1e-5;
  if (typeof value !== "number" || !Number.isFinite(value) || value <= 0) {
    fail(
      "KernelError",
      `op:layer_norm params "epsilon" is "${pyRepr(value)}"; expected a positive number such as 1e-05`,
    );
  }
}

function checkAffine(key: string, b: string[], normalized: string[]): void {
  const missing = normalized.filter((r) => !b.includes(r));
  const extra = b.filter((r) => !normalized.includes(r));
  if (missing.length || extra.length) {
    fail(
      "AxisError",
      `op:layer_norm ${key} axes ${quoted(b)} are not the normalised axes ${quoted(normalized)} in some order` +
        (missing.length ? `; missing ${quoted(missing)}` : "") +
        (extra.length ? `; not normalised ${quoted(extra)}` : ""),
    );
  }
}

/** op:softmax and op:layer_norm; ``affine`` are layer_norm's scale and bias as given (by key). */
export function normalization(
  kname: string,
  a: string[],
  affine: [string, string[]][],
  p: Record<string, unknown>,
  res: Resolver,
): Derived {
  const layerNorm = kname === "op:layer_norm";
  only(p, layerNorm ? ["reduction_axes", "epsilon"] : ["reduction_axes"], kname);
  const normalized = normalizedAxes(kname, a, p, res);
  const index = a.filter((r) => !normalized.includes(r));
  const dims: Dim[] = a.map((r) => (index.includes(r) ? follows(index.indexOf(r)) : whole(r)));
  if (layerNorm) {
    checkEpsilon(p);
    for (const [key, b] of affine) checkAffine(key, b, normalized);
  }
  return { result: a, index, dims: [dims, ...affine.map(([, b]) => b.map(whole))], output: dims };
}
