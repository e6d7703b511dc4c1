// op:dot_partial (geon.core.ops.arithmetic.infer_dot_partial): a dot's partial products over equal
// parts of one contracted axis. params.parts = {axis: F, into: P}; the result is (P, <the dot's
// result>) and both operand dims of F read chunk = len(F) / len(P) elements from chunk·p. A plan
// that splits a contracted axis writes it, followed by an op:sum over P (docs/cost-model.md).

import { parseRef, refLength, type Declared } from "../axes";
import { dot } from "./arithmetic";
import { follows, type Derived, type Dim } from "./inference";
import { fail, pyRepr, quoted } from "./messages";
import { only, type Resolver } from "./params";

/** The partial products of x·y over the parts of params.parts.axis, leading with params.parts.into. */
export function dotPartial(kname: string, x: string[], y: string[], p: Record<string, unknown>, res: Resolver, declared: Declared): Derived {
  only(p, ["parts"], kname);
  const parts = p.parts as Record<string, unknown> | undefined;
  const keys = parts && typeof parts === "object" && !Array.isArray(parts) ? Object.keys(parts).sort() : null;
  if (!keys || keys.length !== 2 || keys[0] !== "axis" || keys[1] !== "into") {
    fail("KernelError", `${kname} params "parts" is "${pyRepr(parts)}"; expected {"axis": contracted axis name, "into": the declared axis counting the parts}`);
  }
  const spec = parts as Record<string, unknown>;
  const base = dot(kname, x, y, {});
  const [xd, yd] = [base.dims[0]!, base.dims[1]!];
  const name = spec.axis;
  const i = x.findIndex((a, n) => xd[n]!.extent !== undefined && parseRef(a).length === 1 && parseRef(a)[0]!.name === name);
  if (i < 0) {
    const contracted = x.filter((_, n) => xd[n]!.extent !== undefined);
    fail("AxisError", `${kname} parts axis "${String(name)}" is not contracted by this dot; expected one of ${quoted(contracted)}`);
  }
  const j = y.findIndex((b, n) => yd[n]!.extent !== undefined && parseRef(b)[0]!.name === name);
  const into = res.ref(spec.into, `${kname} params "parts" "into"`);
  if (parseRef(into).length !== 1 || parseRef(into)[0]!.level !== 0 || base.result.some((r) => parseRef(r)[0]!.name === parseRef(into)[0]!.name)) {
    fail("AxisError", `${kname} parts axis "${into}" must be a new plain axis of its own`);
  }
  const length = refLength(x[i]!, declared);
  const count = refLength(into, declared);
  if (length === null || count === null || count < 1 || length % count !== 0) {
    fail("KernelError", `${kname} cannot split "${String(name)}" of length ${length ?? "None"} into ${count ?? "None"} equal parts; the parts count must divide the length`);
  }
  const chunk = length / count;
  const shifted = (dims: Dim[], split: number): Dim[] =>
    dims.map((d, n) => (n === split ? { ...follows(0, chunk), extent: chunk } : { ...d, terms: d.terms.map(([c, s]) => [c + 1, s] as [number, number]) }));
  return { result: [into, ...base.result], dims: [shifted(xd, i), shifted(yd, j)] };
}
