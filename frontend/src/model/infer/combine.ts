// The inference rules of the kernels that combine several operands into one (DESIGN.md §2, §4;
// geon.core.ops.combine, docs/kernels.md): op:concat joins its operands along one axis each
// (params.along, in operand order) into a new axis params.axis of the summed length — the joined
// axes are no index axes, each operand's and the result's are read whole, as a normalization's
// normalised axes; op:gather puts the indices' axes in place of the table axis params.axis, which
// is read whole (ONNX's table[:axis] + indices + table[axis+1:]). op:where broadcasts as an n-ary
// element-wise kernel over (x, y, condition): infer/arithmetic.ts's elementwise rule.

import { refLength, type Declared } from "../axes";
import { follows, whole, type Derived } from "./inference";
import { fail, quoted } from "./messages";
import { only, type Resolver } from "./params";

/** ops/combine.py _along: params.along, one reference per operand, each an axis of its operand. */
function alongOf(
  kname: string,
  operands: string[][],
  p: Record<string, unknown>,
  res: Resolver,
): string[] {
  const what = `${kname} params "along"`;
  if (!("along" in p))
    fail(
      "KernelError",
      `${kname} needs params "along"; expected one axis per operand, the axis it is joined along`,
    );
  const along = res.refs(p.along, what);
  if (along.length !== operands.length) {
    fail(
      "KernelError",
      `${what} names ${along.length} axes for ${operands.length} operands; expected one axis per operand, in operand order`,
    );
  }
  operands.forEach((a, n) => {
    const r = along[n]!;
    if (!a.includes(r))
      fail(
        "AxisError",
        `${what} names "${r}" for operand ${n}, which is not one of its axes; expected one of ${quoted(a)}`,
      );
  });
  return along;
}

/** op:concat: the first operand's axes with its joined axis replaced by params.axis; the index is the kept axes. */
export function concat(
  kname: string,
  operands: string[][],
  p: Record<string, unknown>,
  res: Resolver,
  declared: Declared,
): Derived {
  only(p, ["along", "axis"], kname);
  const along = alongOf(kname, operands, p, res);
  if (!("axis" in p)) {
    fail(
      "KernelError",
      `${kname} needs params "axis"; expected the new axis of the result, whose length is the sum of the joined axes' lengths`,
    );
  }
  const axis = res.ref(p.axis, `${kname} params "axis"`);
  const first = operands[0]!;
  const others = first.filter((r) => r !== along[0]);
  operands.forEach((a, n) => {
    if (n === 0) return;
    const joined = along[n]!;
    const rest = a.filter((r) => r !== joined);
    const missing = others.filter((r) => !rest.includes(r));
    const extra = rest.filter((r) => !others.includes(r));
    if (missing.length || extra.length) {
      fail(
        "AxisError",
        `${kname} operand ${n} ${quoted(a)} joined along "${joined}" does not share the other axes ${quoted(others)} of operand 0` +
          (missing.length ? `; missing ${quoted(missing)}` : "") +
          (extra.length ? `; not in operand 0 ${quoted(extra)}` : ""),
      );
    }
  });
  if (others.includes(axis)) {
    fail(
      "AxisError",
      `${kname} params "axis" is "${axis}", which the operands keep; name a new axis for the joined one, not one of ${quoted(others)}`,
    );
  }
  const lengths = along.map((r) => refLength(r, declared));
  const length = refLength(axis, declared);
  if (length !== null && lengths.every((n) => n !== null)) {
    const total = (lengths as number[]).reduce((s, n) => s + n, 0);
    if (length !== total) {
      fail(
        "ShapeError",
        `${kname} joins ${quoted(along)} of lengths ${lengths.join(" + ")} = ${total}, but axis "${axis}" has length ${length}; declare an axis of length ${total}`,
      );
    }
  }
  const result = first.map((r) => (r === along[0] ? axis : r));
  const dims = operands.map((a, n) =>
    a.map((r) => (r === along[n] ? whole(r) : follows(others.indexOf(r)))),
  );
  const output = result.map((r) => (r === axis ? whole(axis) : follows(others.indexOf(r))));
  return { result, index: others, dims, output };
}

/** op:gather: the table's axes with params.axis replaced, in place, by the indices' axes. */
export function gather(
  kname: string,
  table: string[],
  indices: string[],
  p: Record<string, unknown>,
  res: Resolver,
): Derived {
  only(p, ["axis"], kname);
  if (!("axis" in p))
    fail(
      "KernelError",
      `${kname} needs params "axis"; expected the table axis to index, one of ${quoted(table)}`,
    );
  const axis = res.ref(p.axis, `${kname} params "axis"`);
  if (!table.includes(axis)) {
    fail(
      "AxisError",
      `${kname} params "axis" is "${axis}", which is not a table axis; expected one of ${quoted(table)}`,
    );
  }
  const shared = indices.filter((r) => table.includes(r));
  if (shared.length) {
    fail(
      "AxisError",
      `${kname} indices ${quoted(indices)} share ${quoted(shared)} with the table ${quoted(table)}; give the indices axes of their own`,
    );
  }
  const at = table.indexOf(axis);
  const result = [...table.slice(0, at), ...indices, ...table.slice(at + 1)];
  const tableDims = table.map((r) => (r === axis ? whole(r) : follows(result.indexOf(r))));
  return { result, dims: [tableDims, indices.map((r) => follows(result.indexOf(r)))] };
}
