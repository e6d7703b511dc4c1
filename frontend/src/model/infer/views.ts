// The inference rules of the view kernels (DESIGN.md §2; geon.core.ops.views): cast_axes,
// broadcast, dimshuffle and transpose relabel or reorder; slice and pad change lengths, so a
// changed axis is renamed to a declared axis of the new length (params.axes), never redeclared;
// flatten merges adjacent axes into a composite "H*W" and unflatten splits it. Each derives the
// dims its IPFSignature comes from: slice starts and steps, pad widths, flatten's row-major
// merge.

import { isComposite, refLength, refParts, transposeRef, type Declared } from "../axes";
import { follows, identity, type Derived, type Dim } from "./inference";
import { fail, formatAxes, pyRepr, quoted } from "./messages";
import { axesOf, isInt, isObject, noDups, only, type Resolver } from "./params";

/** The required params.axes of a view, each reference once. */
function viewAxes(kname: string, p: Record<string, unknown>, res: Resolver): string[] {
  only(p, ["axes"], kname);
  if (!("axes" in p))
    fail("KernelError", `${kname} needs params "axes"; expected a list of axis references`);
  const what = `${kname} params "axes"`;
  const refs = res.refs(p.axes, what);
  noDups(refs, what);
  return refs;
}

/** cast_axes, broadcast, dimshuffle and transpose: the same data under other axes or another order. */
export function view(
  kname: string,
  a: string[],
  p: Record<string, unknown>,
  res: Resolver,
  declared: Declared,
): Derived {
  const placed = (result: string[]): Derived => ({
    result,
    dims: [a.map((r) => follows(result.indexOf(r)))],
  });
  if (kname === "op:transpose") {
    only(p, [], kname);
    return {
      result: [...a].reverse().map(transposeRef),
      dims: [a.map((_, i) => follows(a.length - 1 - i))],
    };
  }
  const target = viewAxes(kname, p, res);
  if (kname === "op:cast_axes") {
    if (target.length !== a.length) {
      fail(
        "AxisError",
        `cast_axes to ${quoted(target)} has ${target.length} axes but the input ${formatAxes(a)} has ${a.length}; name one new axis per input axis`,
      );
    }
    a.forEach((old, i) => {
      const r = target[i]!;
      const lo = refLength(old, declared);
      const lr = refLength(r, declared);
      if (lo !== null && lr !== null && lo !== lr) {
        fail(
          "ShapeError",
          `cast_axes cannot relabel "${old}" (length ${lo}) as "${r}" (length ${lr}); the lengths must agree position by position`,
        );
      }
    });
    return { result: target, dims: [identity(a.length)] };
  }
  const missing = a.filter((r) => !target.includes(r));
  if (kname === "op:broadcast") {
    if (missing.length) {
      fail(
        "AxisError",
        `broadcast to ${quoted(target)} is missing the input's ${quoted(missing)}; the target axes must include every input axis`,
      );
    }
    return placed(target);
  }
  const extra = target.filter((r) => !a.includes(r));
  if (missing.length || extra.length) {
    fail(
      "AxisError",
      `dimshuffle to ${quoted(target)} is not an order of the input ${quoted(a)}` +
        (missing.length ? `; missing ${quoted(missing)}` : "") +
        (extra.length ? `; not in the input ${quoted(extra)}` : ""),
    );
  }
  return placed(target);
}

/** Python's slice(start, stop, step).indices(length). */
function sliceIndices(
  start: number | null,
  stop: number | null,
  step: number | null,
  length: number,
): [number, number, number] {
  const s = step ?? 1;
  const lower = s < 0 ? -1 : 0;
  const upper = s < 0 ? length - 1 : length;
  const clamp = (v: number | null, dflt: number): number => {
    if (v === null) return dflt;
    if (v < 0) return Math.max(v + length, lower);
    return Math.min(v, upper);
  };
  return [clamp(start, s < 0 ? upper : lower), clamp(stop, s < 0 ? lower : upper), s];
}

/** len(range(start, stop, step)). */
function rangeLength([start, stop, step]: [number, number, number]): number {
  return step > 0
    ? Math.max(0, Math.ceil((stop - start) / step))
    : Math.max(0, Math.ceil((start - stop) / -step));
}

/** ops/views.py _renames: params.axes of slice and pad, old input axis -> new axis. */
function renames(
  kname: string,
  p: Record<string, unknown>,
  a: string[],
  res: Resolver,
): Map<string, string> {
  const raw = "axes" in p ? p.axes : {};
  if (!isObject(raw))
    fail(
      "KernelError",
      `${kname} params "axes" is "${pyRepr(raw)}"; expected an object mapping old axis to new`,
    );
  const out = new Map<string, string>();
  const what = `${kname} params "axes"`;
  for (const [oldText, newText] of Object.entries(raw)) {
    const old = res.ref(oldText, what);
    if (!a.includes(old))
      fail(
        "AxisError",
        `${kname} renames "${old}", which is not an axis of the input; expected one of ${quoted(a)}`,
      );
    out.set(old, res.ref(newText, what));
  }
  return out;
}

/** ops/views.py _new_axis: the axis a slice or pad of ``old`` yields, ``n`` long. */
function newAxis(
  kname: string,
  old: string,
  n: number,
  names: Map<string, string>,
  declared: Declared,
): string {
  const renamed = names.get(old);
  if (renamed === undefined) {
    const length = refLength(old, declared);
    if (length !== null && length !== n) {
      const verb = kname === "op:slice" ? "slicing" : "padding";
      fail(
        "AxisError",
        `${verb} axis "${old}" changes its length from ${length} to ${n}; name a new axis for it, e.g. axes={"${old}": "${old}${n}"}`,
      );
    }
    return old;
  }
  const length = refLength(renamed, declared);
  if (length !== null && length !== n) {
    fail(
      "ShapeError",
      `${kname} maps axis "${old}" to "${renamed}" of length ${length}, but the result has ${n} elements along it; declare "${renamed}" with length ${n}`,
    );
  }
  return renamed;
}

/** op:slice: per axis an index (the axis is dropped) or {start, stop, step}; a changed length needs a rename. */
export function slice(
  kname: string,
  a: string[],
  p: Record<string, unknown>,
  res: Resolver,
  declared: Declared,
): Derived {
  only(p, ["slices", "axes"], kname);
  const raw = p.slices;
  if (!isObject(raw)) {
    fail(
      "KernelError",
      `${kname} params "slices" is "${pyRepr(raw)}"; expected an object such as {"H": {"start": 0, "stop": 2, "step": 1}} or {"H": 0}`,
    );
  }
  // per sliced axis: an index (the axis is dropped) or [start, stop, step] as slice.indices gives them
  const specs = new Map<string, number | [number, number, number]>();
  for (const [name, spec] of Object.entries(raw)) {
    const ref = res.ref(name, `${kname} params "slices"`);
    if (!a.includes(ref))
      fail(
        "AxisError",
        `op:slice slices "${ref}", which is not an axis of the input; expected one of ${quoted(a)}`,
      );
    const length = refLength(ref, declared);
    if (isInt(spec)) {
      if (length !== null && !(-length <= spec && spec < length)) {
        fail(
          "ShapeError",
          `op:slice index ${spec} is out of range for axis "${ref}" of length ${length}; expected ${-length} <= index < ${length}`,
        );
      }
      specs.set(ref, spec >= 0 || length === null ? spec : spec + length);
      continue;
    }
    if (
      !isObject(spec) ||
      Object.keys(spec).some((key) => !["start", "stop", "step"].includes(key))
    ) {
      fail(
        "KernelError",
        `op:slice spec "${pyRepr(spec)}" for axis "${ref}" is invalid; expected an integer or {"start", "stop", "step"}`,
      );
    }
    const parts = [spec.start ?? null, spec.stop ?? null, spec.step ?? null];
    for (const v of parts) {
      if (v !== null && !isInt(v))
        fail(
          "KernelError",
          `op:slice spec "${pyRepr(spec)}" for axis "${ref}" has "${pyRepr(v)}"; expected integers or null`,
        );
    }
    if (parts[2] === 0)
      fail("KernelError", `op:slice step for axis "${ref}" is 0; expected a nonzero integer`);
    if (length === null)
      fail(
        "ShapeError",
        `op:slice cannot slice axis "${ref}" before it has a length; bind it first`,
      );
    specs.set(
      ref,
      sliceIndices(
        parts[0] as number | null,
        parts[1] as number | null,
        parts[2] as number | null,
        length,
      ),
    );
  }
  const names = renames(kname, p, a, res);
  for (const old of names.keys()) {
    if (!specs.has(old))
      fail(
        "AxisError",
        `op:slice renames "${old}" but does not slice it; rename axes with cast_axes`,
      );
  }
  const result: string[] = [];
  for (const r of a) {
    const spec = specs.get(r);
    if (typeof spec === "number") {
      if (names.has(r))
        fail(
          "AxisError",
          `op:slice drops axis "${r}" with an integer index, so it cannot be renamed`,
        );
      continue;
    }
    if (spec === undefined) {
      result.push(r);
      continue;
    }
    const n = rangeLength(spec);
    if (n === 0)
      fail("ShapeError", `op:slice selects no elements of axis "${r}"; an axis has length >= 1`);
    result.push(newAxis(kname, r, n, names, declared));
  }
  axesOf(result);
  let col = 0;
  const dims = a.map((r): Dim => {
    const spec = specs.get(r);
    if (typeof spec === "number") return { terms: [], offset: spec };
    if (spec === undefined) return follows(col++);
    return follows(col++, spec[2], spec[0]);
  });
  return { result, dims: [dims] };
}

/** op:pad: zero widths [before, after] per axis; a padded axis is renamed to one of the new length. */
export function pad(
  kname: string,
  a: string[],
  p: Record<string, unknown>,
  res: Resolver,
  declared: Declared,
): Derived {
  only(p, ["pad", "axes"], kname);
  const raw = p.pad;
  if (!isObject(raw))
    fail(
      "KernelError",
      `op:pad params "pad" is "${pyRepr(raw)}"; expected an object such as {"H": [1, 1]}`,
    );
  const widths = new Map<string, [number, number]>();
  for (const [name, w] of Object.entries(raw)) {
    const ref = res.ref(name, 'op:pad params "pad"');
    if (!a.includes(ref))
      fail(
        "AxisError",
        `op:pad pads "${ref}", which is not an axis of the input; expected one of ${quoted(a)}`,
      );
    if (!Array.isArray(w) || w.length !== 2 || w.some((v) => !isInt(v) || v < 0)) {
      fail(
        "KernelError",
        `op:pad widths "${pyRepr(w)}" for axis "${ref}" are invalid; expected [before, after] with integers >= 0`,
      );
    }
    if (refLength(ref, declared) === null)
      fail("ShapeError", `op:pad cannot pad axis "${ref}" before it has a length; bind it`);
    widths.set(ref, [w[0] as number, w[1] as number]);
  }
  const names = renames(kname, p, a, res);
  const result: string[] = [];
  for (const r of a) {
    const w = widths.get(r);
    if (w) result.push(newAxis(kname, r, refLength(r, declared)! + w[0] + w[1], names, declared));
    else if (names.has(r))
      fail("AxisError", `op:pad renames "${r}" but does not pad it; rename with cast_axes`);
    else result.push(r);
  }
  axesOf(result);
  // 0 - before, not -before: no negative zero in the offsets
  return { result, dims: [a.map((r, i) => follows(i, 1, 0 - (widths.get(r)?.[0] ?? 0)))] };
}

/** op:flatten: adjacent axes become one composite axis, merged row-major. */
export function flatten(
  kname: string,
  a: string[],
  p: Record<string, unknown>,
  res: Resolver,
): Derived {
  const group = viewAxes(kname, p, res);
  if (group.length < 2)
    fail(
      "AxisError",
      `flatten needs at least two adjacent axes; got ${quoted(group)} from ${formatAxes(a)}`,
    );
  const strangers = group.filter((r) => !a.includes(r));
  if (strangers.length)
    fail(
      "AxisError",
      `flatten axes ${quoted(strangers)} are not axes of the input; expected adjacent axes from ${quoted(a)}`,
    );
  const first = a.indexOf(group[0]!);
  if (a.slice(first, first + group.length).join("\n") !== group.join("\n")) {
    fail(
      "AxisError",
      `flatten axes ${quoted(group)} are not adjacent in this order in ${formatAxes(a)}; dimshuffle them next to each other first`,
    );
  }
  // CompositeRef.of: nested composites are flattened into their parts, each part at most once
  const parts = group.flatMap(refParts);
  const comp = parts.join("*");
  const seen = new Set<string>();
  for (const part of parts) {
    if (seen.has(part))
      fail(
        "AxisError",
        `axis "${part}" appears twice in composite "${comp}"; each part appears once`,
      );
    seen.add(part);
  }
  const result = axesOf([...a.slice(0, first), comp, ...a.slice(first + group.length)]);
  // one index column per member of the group (a composite member, H*W, is one column)
  const output: Dim[] = [
    ...identity(first),
    { terms: [], merged: group.map((ref, j): [number, string] => [first + j, ref]) },
    ...a.slice(first + group.length).map((_, i) => follows(first + group.length + i)),
  ];
  return { result, index: a, dims: [identity(a.length)], output };
}

/** op:unflatten: composite axes (the named ones, or every one) split into their parts. */
export function unflatten(
  kname: string,
  a: string[],
  p: Record<string, unknown>,
  res: Resolver,
): Derived {
  only(p, ["axes"], kname);
  let chosen: string[];
  if ("axes" in p) {
    chosen = res.refs(p.axes, 'op:unflatten params "axes"');
    for (const r of chosen) {
      if (!isComposite(r) || !a.includes(r)) {
        fail(
          "AxisError",
          `unflatten axis "${r}" is not a composite axis of the input; expected one of ${quoted(a.filter(isComposite))}`,
        );
      }
    }
  } else {
    chosen = a.filter(isComposite);
    if (!chosen.length)
      fail(
        "AxisError",
        `unflatten found no composite axis (such as H*W) in ${formatAxes(a)}; flatten first`,
      );
  }
  const result = axesOf(a.flatMap((r) => (chosen.includes(r) ? refParts(r) : [r])));
  const dims = a.map((r): Dim =>
    chosen.includes(r)
      ? {
          terms: [],
          merged: refParts(r).map((part): [number, string] => [result.indexOf(part), part]),
        }
      : follows(result.indexOf(r)),
  );
  return { result, dims: [dims] };
}
