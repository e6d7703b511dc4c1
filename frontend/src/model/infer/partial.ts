// Partial operations, written by a plan that splits a contracted or reduced axis (docs/cost-model.md).
// op:dot_partial (geon.core.ops.arithmetic.infer_dot_partial): a dot's partial products over equal parts
// of one contracted axis; params.parts = {axis: F, into: P}, the result is (P, <the dot's result>) and
// both operand dims of F read chunk = len(F) / len(P) elements from chunk·p; an op:sum over P follows.
// A reduction with params.parts = {axis: R, into: P} is the same cut of its reduced axis R; the same
// reduction over P follows.

import { parseRef, refLength, type Declared } from "../axes";
import { dot, reduction } from "./arithmetic";
import { follows, type Derived, type Dim } from "./inference";
import { fail, pyRepr, quoted } from "./messages";
import { only, type Resolver } from "./params";

/** params.parts checked for shape; ``split`` says which kind of axis it splits. */
function partsSpec(
  kname: string,
  p: Record<string, unknown>,
  split: "contracted" | "reduced",
): Record<string, unknown> {
  const parts = p.parts as Record<string, unknown> | undefined;
  const keys =
    parts && typeof parts === "object" && !Array.isArray(parts) ? Object.keys(parts).sort() : null;
  if (!keys || keys.length !== 2 || keys[0] !== "axis" || keys[1] !== "into") {
    fail(
      "KernelError",
      `${kname} params "parts" is "${pyRepr(parts)}"; expected {"axis": ${split} axis name, "into": the declared axis counting the parts}`,
    );
  }
  return parts as Record<string, unknown>;
}

/** The parts axis (a new plain axis, not in ``result``) and the chunk each part reads of the split axis ``ref``. */
function partsOf(
  kname: string,
  spec: Record<string, unknown>,
  ref: string,
  result: string[],
  res: Resolver,
  declared: Declared,
): [string, number] {
  const into = res.ref(spec.into, `${kname} params "parts" "into"`);
  if (
    parseRef(into).length !== 1 ||
    parseRef(into)[0]!.level !== 0 ||
    result.some((r) => parseRef(r)[0]!.name === parseRef(into)[0]!.name)
  ) {
    fail("AxisError", `${kname} parts axis "${into}" must be a new plain axis of its own`);
  }
  const length = refLength(ref, declared);
  const count = refLength(into, declared);
  if (length === null || count === null || count < 1 || length % count !== 0) {
    fail(
      "KernelError",
      `${kname} cannot split "${String(spec.axis)}" of length ${length ?? "None"} into ${count ?? "None"} equal parts; the parts count must divide the length`,
    );
  }
  return [into, length / count];
}

/** An operand's dims under a leading parts axis: dim ``split`` reads a chunk from chunk·p, the rest shift one column on. */
const shifted = (dims: Dim[], split: number, chunk: number): Dim[] =>
  dims.map((d, n) =>
    n === split
      ? { ...follows(0, chunk), extent: chunk }
      : { ...d, terms: d.terms.map(([c, s]) => [c + 1, s] as [number, number]) },
  );

/** The partial products of x·y over the parts of params.parts.axis, leading with params.parts.into. */
export function dotPartial(
  kname: string,
  x: string[],
  y: string[],
  p: Record<string, unknown>,
  res: Resolver,
  declared: Declared,
): Derived {
  only(p, ["parts"], kname);
  const spec = partsSpec(kname, p, "contracted");
  const base = dot(kname, x, y, {});
  const [xd, yd] = [base.dims[0]!, base.dims[1]!];
  const name = spec.axis;
  const i = x.findIndex(
    (a, n) =>
      xd[n]!.extent !== undefined && parseRef(a).length === 1 && parseRef(a)[0]!.name === name,
  );
  if (i < 0) {
    const contracted = x.filter((_, n) => xd[n]!.extent !== undefined);
    fail(
      "AxisError",
      `${kname} parts axis "${String(name)}" is not contracted by this dot; expected one of ${quoted(contracted)}`,
    );
  }
  const j = y.findIndex((b, n) => yd[n]!.extent !== undefined && parseRef(b)[0]!.name === name);
  const [into, chunk] = partsOf(kname, spec, x[i]!, base.result, res, declared);
  return { result: [into, ...base.result], dims: [shifted(xd, i, chunk), shifted(yd, j, chunk)] };
}

/** A reduction with params.parts (geon.core.ops.arithmetic.infer_reduction): each part of the reduced axis
 * params.parts.axis reduced by itself, the parts leading the result. */
export function reductionPartial(
  kname: string,
  a: string[],
  p: Record<string, unknown>,
  res: Resolver,
  declared: Declared,
): Derived {
  only(p, ["reduction_axes", "out_axes", "parts"], kname);
  const { parts: _, ...rest } = p;
  const base = reduction(kname, a, rest, res);
  const spec = partsSpec(kname, p, "reduced");
  const dims = base.dims[0]!;
  const reduced = a.filter((r) => !base.result.includes(r));
  const i = a.findIndex(
    (r, n) =>
      !base.result.includes(r) &&
      dims[n]!.extent !== undefined &&
      parseRef(r).length === 1 &&
      parseRef(r)[0]!.name === spec.axis,
  );
  if (i < 0) {
    fail(
      "AxisError",
      `${kname} parts axis "${String(spec.axis)}" is not reduced by this operation; expected one of ${quoted(reduced)}`,
    );
  }
  const [into, chunk] = partsOf(kname, spec, a[i]!, base.result, res, declared);
  return { result: [into, ...base.result], dims: [shifted(dims, i, chunk)] };
}
