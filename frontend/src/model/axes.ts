// Named axes on the client (DESIGN.md §2): references such as "W-1", and the axis inference of
// the kernels the editor predicts before the server answers. It mirrors geon.core.ops.infer for
// every named kernel of the catalogue (element-wise, unary, dot, transpose, reductions, the
// relabelling views, slice, pad, flatten, unflatten and conv2d), message for message, and derives
// the same IPFSignature (slice starts and steps, pad widths, conv windows, strides and padding,
// flatten's row-major merge); it is tested against the server's own table
// (tests/core/axis_cases.json). Slice and pad never declare axes: the new axis a changed length
// needs is named in params.axes and must already be declared, as on the server.

export interface AxisDecl {
  name: string;
  length: number | null;
  roles?: string[];
  cls?: string | null;
  batch?: boolean;
  doc?: string;
}

export type Declared = ReadonlyMap<string, AxisDecl>;

export type ErrorType = "AxisError" | "ShapeError" | "KernelError";

export class InferenceError extends Error {
  constructor(
    readonly kind: ErrorType,
    message: string,
  ) {
    super(message);
  }
}

// One part of a reference once trimmed: a name, then an optional dual level. No two quantifiers
// can take the same character (a name holds no whitespace; whitespace only precedes a sign or the
// digits), so matching is linear in the length; the old /^\s*NAME\s*(LEVEL)?\s*$/ split every
// run of spaces every way (quadratic: 0.4 s for 20,000 spaces). As geon.core.axes._REF_PART.
const REF_PART = /^([A-Za-z_][A-Za-z0-9_]*)(?:\s*([+-])\s*([0-9]+))?$/;
/** Characters in one axis reference as written (geon.core.limits.MAX_AXIS_REF_LENGTH). */
export const MAX_AXIS_REF_LENGTH = 1024;
export const AXIS_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

export interface RefPart {
  name: string;
  level: number;
}

const parsed = new Map<string, readonly RefPart[]>();

/** "H*W+1" -> [{H, 0}, {W, 1}]; throws an AxisError naming the text when it is not a reference. */
export function parseRef(text: string): readonly RefPart[] {
  let found = parsed.get(text);
  if (!found) {
    found = Object.freeze(parseRefUncached(text).map((p) => Object.freeze(p)));
    if (parsed.size > 10_000) parsed.clear();
    parsed.set(text, found);
  }
  return found;
}

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/** An integer for a message: as written when short, else its leading digits and length (geon.core.limits.show_int). */
function showInt(value: bigint): string {
  const digits = (value < 0n ? -value : value).toString();
  return digits.length <= 20 ? value.toString() : `${value < 0n ? "-" : ""}${digits.slice(0, 13)}... (${digits.length} digits)`;
}

/** ``text`` for a message: as written when short, else its start and length (geon.core.limits.show_text). */
function showText(text: string): string {
  return text.length <= 40 ? text : `${text.slice(0, 40)}... (${text.length} characters)`;
}

function parseRefUncached(text: string): RefPart[] {
  if (text.length > MAX_AXIS_REF_LENGTH) {
    throw new InferenceError(
      "AxisError",
      `axis reference "${showText(text)}" is too long; expected at most ${MAX_AXIS_REF_LENGTH} characters`,
    );
  }
  return text.split("*").map((part) => {
    const m = REF_PART.exec(part.trim());
    if (!m) {
      throw new InferenceError(
        "AxisError",
        `axis reference "${text}" is invalid; expected a name with an optional dual level, e.g. "W", "W-1", "W+1", or a composite "H*W"`,
      );
    }
    const big = m[2] === undefined ? 0n : BigInt(m[2] + m[3]!);
    if (big < INT64_MIN || big > INT64_MAX) {
      throw new InferenceError(
        "AxisError",
        `dual level "${showInt(big)}" for axis "${m[1]!}" is out of range; expected an integer from ${INT64_MIN} to ${INT64_MAX}`,
      );
    }
    return { name: m[1]!, level: Number(big) };
  });
}

export function formatRef(parts: readonly RefPart[]): string {
  return parts.map((p) => p.name + (p.level === 0 ? "" : p.level > 0 ? `+${p.level}` : `${p.level}`)).join("*");
}

/** The canonical spelling of a reference ("W - 1" -> "W-1"). */
export function canonical(text: string): string {
  return formatRef(parseRef(text));
}

export function shift(ref: string, delta: number): string {
  return formatRef(parseRef(ref).map((p) => ({ name: p.name, level: p.level + delta })));
}

export function transposeRef(ref: string): string {
  return formatRef(parseRef(ref).map((p) => ({ name: p.name, level: -1 - p.level })));
}

/** The base axis names a reference uses ("H*W-1" -> ["H", "W"]). */
export function baseNames(ref: string): string[] {
  return parseRef(ref).map((p) => p.name);
}

/** The length of a reference (product for a composite); null when an axis is unbound or unknown. */
export function refLength(ref: string, declared: Declared): number | null {
  let n = 1;
  for (const p of parseRef(ref)) {
    const len = declared.get(p.name)?.length;
    if (len === null || len === undefined) return null;
    n *= len;
  }
  return n;
}

const quoted = (items: Iterable<string>): string => `(${[...items].map((i) => `"${i}"`).join(", ")})`;
const formatAxes = (items: Iterable<string>): string => `(${[...items].join(", ")})`;

/** Python's repr of a JSON value, as the server's messages quote bad params. */
export function pyRepr(value: unknown): string {
  if (value === null || value === undefined) return "None";
  if (typeof value === "string") return `'${value}'`;
  if (typeof value === "boolean") return value ? "True" : "False";
  if (Array.isArray(value)) return `[${value.map(pyRepr).join(", ")}]`;
  if (typeof value === "object") {
    return `{${Object.entries(value as Record<string, unknown>).map(([k, v]) => `'${k}': ${pyRepr(v)}`).join(", ")}}`;
  }
  return String(value);
}

export interface KernelInfo {
  name: string;
  family: "nary" | "binary" | "unary" | "dot" | "reduction" | "view" | "conv" | "positional";
  inputs: string[];
  outputs: string[];
  variadic: boolean;
  optional: string[];
  named: boolean;
  doc: string;
}

/** The kernels whose inference the client mirrors: every named kernel of the catalogue. */
export const MIRRORED = new Set([
  "op:add", "op:multiply", "op:maximum", "op:minimum", "op:subtract", "op:divide", "op:power",
  "op:negative", "op:abs", "op:exp", "op:log", "op:sqrt", "op:square", "op:tanh", "op:sigmoid", "op:relu",
  "op:dot", "op:sum", "op:prod", "op:max", "op:min", "op:mean",
  "op:cast_axes", "op:broadcast", "op:dimshuffle", "op:transpose",
  "op:slice", "op:pad", "op:flatten", "op:unflatten", "op:conv2d",
]);

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
const follows = (col: number, coef = 1, offset = 0): Dim => ({ terms: [[col, coef]], offset });
/** A dim read whole, with no index column (contracted, reduced, a conv channel). */
const whole = (ref: string): Dim => ({ terms: [], extent: ref });
const identity = (n: number): Dim[] => Array.from({ length: n }, (_, i) => follows(i));

/** Result axes, the index axes when they are not the result's (flatten), per operand (in IO-key
 * order) its dims, and the result's dims when they are not the identity. */
interface Derived {
  result: string[];
  index?: string[];
  dims: Dim[][];
  output?: Dim[];
}

export type Inference =
  | { kind: "ok"; result: string[]; index: string[]; operands: OperandDims[]; output: Dim[] }
  | { kind: "error"; type: ErrorType; message: string }
  | { kind: "server" };

function fail(kind: ErrorType, message: string): never {
  throw new InferenceError(kind, message);
}

class Resolver {
  constructor(private readonly declared: Declared) {}

  ref(item: unknown, what: string): string {
    if (typeof item !== "string") fail("KernelError", `${what} has "${pyRepr(item)}"; expected an axis reference such as "W-1"`);
    const parts = parseRef(item);
    for (const p of parts) {
      if (!this.declared.has(p.name)) fail("AxisError", `axis "${p.name}" in "${item}" is not declared; declare it first`);
    }
    return formatRef(parts);
  }

  refs(items: unknown, what: string): string[] {
    if (!Array.isArray(items)) fail("KernelError", `${what} is "${pyRepr(items)}"; expected a list of axis references`);
    return items.map((i) => this.ref(i, what));
  }
}

function only(params: Record<string, unknown>, allowed: string[], kname: string): void {
  for (const key of Object.keys(params)) {
    if (!allowed.includes(key)) {
      fail("KernelError", `${kname} has unknown param "${key}"; expected ${allowed.length ? quoted(allowed) : "no params"}`);
    }
  }
}

function noDups(refs: string[], what: string): void {
  const seen = new Set<string>();
  for (const r of refs) {
    if (seen.has(r)) fail("AxisError", `axis "${r}" appears twice in ${what}; name each axis once`);
    seen.add(r);
  }
}

function elementwise(kname: string, operands: string[][], p: Record<string, unknown>, res: Resolver, declared: Declared): Derived {
  only(p, ["axes"], kname);
  const result = [...operands[0]!];
  const maps: number[][] = [result.map((_, i) => i)];
  const single = (r: string): RefPart | null => {
    const parts = parseRef(r);
    return parts.length === 1 ? parts[0]! : null;
  };
  for (const axes of operands.slice(1)) {
    const before = result.length;
    const claimed = new Set(axes.filter((r) => result.includes(r)));
    const m: number[] = [];
    for (const r of axes) {
      if (result.includes(r)) {
        m.push(result.indexOf(r));
        continue;
      }
      const rp = single(r);
      const rd = rp ? declared.get(rp.name) : undefined;
      let found = -1;
      if (rp && rd?.cls) {
        for (let i = 0; i < before; i++) {
          const a = result[i]!;
          const ap = single(a);
          const ad = ap ? declared.get(ap.name) : undefined;
          if (ap && ad && ap.name !== rp.name && ad.cls === rd.cls && ad.length != null && ad.length === rd.length && !claimed.has(a)) {
            found = i;
            break;
          }
        }
      }
      if (found < 0) {
        result.push(r);
        m.push(result.length - 1);
      } else {
        claimed.add(result[found]!);
        m.push(found);
      }
    }
    maps.push(m);
  }
  if ("axes" in p) {
    const what = `${kname} params "axes"`;
    const order = res.refs(p.axes, what);
    noDups(order, what);
    const missing = result.filter((r) => !order.includes(r));
    const extra = order.filter((r) => !result.includes(r));
    if (missing.length || extra.length) {
      fail(
        "AxisError",
        `${kname} params axes ${quoted(order)} are not an order of the result axes ${quoted(result)}` +
          (missing.length ? `; missing ${quoted(missing)}` : "") +
          (extra.length ? `; not in the result ${quoted(extra)}` : ""),
      );
    }
    const perm = result.map((r) => order.indexOf(r));
    return { result: order, dims: maps.map((m) => m.map((i) => follows(perm[i]!))) };
  }
  return { result, dims: maps.map((m) => m.map((i) => follows(i))) };
}

function dot(x: string[], y: string[]): Derived {
  const pairs: [number, number, "x" | "y"][] = [];
  const yPartner = new Map<number, number>();
  x.forEach((a, i) => {
    const up = shift(a, 1);
    const down = shift(a, -1);
    const found = y.flatMap((b, j) => (b === up || b === down ? [[j, b] as const] : []));
    if (found.length > 1) {
      fail("AxisError", `axis "${a}" of x could pair with both ${quoted(found.map(([, b]) => b))} of y; keep only one of them, e.g. "${found[0]![1]}"`);
    }
    const hit = found[0];
    if (hit) {
      const [j, b] = hit;
      const prior = yPartner.get(j);
      if (prior !== undefined) {
        fail("AxisError", `axis "${b}" of y could pair with both "${x[prior]}" and "${a}" of x; keep only one of them, e.g. "${x[prior]}"`);
      }
      yPartner.set(j, i);
      pairs.push([i, j, b === up ? "x" : "y"]);
    }
  });
  const px = new Set(pairs.map((p) => p[0]));
  const py = new Set(pairs.map((p) => p[1]));
  const freeX = x.filter((_, i) => !px.has(i));
  const freeY = y.filter((_, j) => !py.has(j));
  for (const a of freeX) {
    if (freeY.includes(a)) {
      const level = parseRef(a)[0]!.level;
      fail("AxisError", `axis "${a}" appears in both operands at level ${level}; mark one side as a dual, e.g. ${shift(a, -1)}`);
    }
  }
  const sides = new Set(pairs.map((p) => p[2]));
  if (sides.size > 1) {
    const lx = pairs.find((p) => p[2] === "x")!;
    const ly = pairs.find((p) => p[2] === "y")!;
    fail(
      "AxisError",
      `dot pairs disagree on which operand holds the lower level: "${x[lx[0]]}" of x pairs with "${y[lx[1]]}" of y, but "${y[ly[1]]}" of y pairs with "${x[ly[0]]}" of x; put every lower level on one side, e.g. write "${y[ly[1]]}" in x and "${x[ly[0]]}" in y`,
    );
  }
  const result = sides.has("y") && sides.size === 1 ? [...freeY, ...freeX] : [...freeX, ...freeY];
  return {
    result,
    dims: [x.map((a, i) => (px.has(i) ? whole(a) : follows(result.indexOf(a)))), y.map((b, j) => (py.has(j) ? whole(b) : follows(result.indexOf(b))))],
  };
}

function reduction(kname: string, a: string[], p: Record<string, unknown>, res: Resolver): Derived {
  only(p, ["reduction_axes", "out_axes"], kname);
  const red = "reduction_axes" in p ? res.refs(p.reduction_axes, `${kname} reduction_axes`) : null;
  let out = "out_axes" in p ? res.refs(p.out_axes, `${kname} out_axes`) : null;
  for (const [name, group] of [["reduction_axes", red], ["out_axes", out]] as const) {
    if (group === null) continue;
    noDups(group, `${kname} ${name}`);
    const strangers = group.filter((r) => !a.includes(r));
    if (strangers.length) {
      fail(
        "AxisError",
        `${kname} ${name} ${quoted(strangers)} ${strangers.length === 1 ? "is not an axis" : "are not axes"} of the input; expected axes from ${quoted(a)}`,
      );
    }
  }
  if (red !== null && out !== null) {
    const both = red.filter((r) => out!.includes(r));
    if (both.length) {
      fail("AxisError", `${kname} axes ${quoted(both)} appear in both reduction_axes and out_axes; each input axis goes to exactly one of them`);
    }
    const neither = a.filter((r) => !red.includes(r) && !out!.includes(r));
    if (neither.length) {
      fail("AxisError", `${kname} input axes ${quoted(neither)} are in neither reduction_axes nor out_axes; each input axis goes to exactly one of them`);
    }
  }
  if (out === null) {
    const reduced = red ?? a;
    out = a.filter((r) => !reduced.includes(r));
  }
  const result = out;
  return { result, dims: [a.map((r) => (result.includes(r) ? follows(result.indexOf(r)) : whole(r)))] };
}

function viewAxes(kname: string, p: Record<string, unknown>, res: Resolver): string[] {
  only(p, ["axes"], kname);
  if (!("axes" in p)) fail("KernelError", `${kname} needs params "axes"; expected a list of axis references`);
  const what = `${kname} params "axes"`;
  const refs = res.refs(p.axes, what);
  noDups(refs, what);
  return refs;
}

function view(kname: string, a: string[], p: Record<string, unknown>, res: Resolver, declared: Declared): Derived {
  const placed = (result: string[]): Derived => ({ result, dims: [a.map((r) => follows(result.indexOf(r)))] });
  if (kname === "op:transpose") {
    only(p, [], kname);
    return { result: [...a].reverse().map(transposeRef), dims: [a.map((_, i) => follows(a.length - 1 - i))] };
  }
  const target = viewAxes(kname, p, res);
  if (kname === "op:cast_axes") {
    if (target.length !== a.length) {
      fail("AxisError", `cast_axes to ${quoted(target)} has ${target.length} axes but the input ${formatAxes(a)} has ${a.length}; name one new axis per input axis`);
    }
    a.forEach((old, i) => {
      const r = target[i]!;
      const lo = refLength(old, declared);
      const lr = refLength(r, declared);
      if (lo !== null && lr !== null && lo !== lr) {
        fail("ShapeError", `cast_axes cannot relabel "${old}" (length ${lo}) as "${r}" (length ${lr}); the lengths must agree position by position`);
      }
    });
    return { result: target, dims: [identity(a.length)] };
  }
  const missing = a.filter((r) => !target.includes(r));
  if (kname === "op:broadcast") {
    if (missing.length) {
      fail("AxisError", `broadcast to ${quoted(target)} is missing the input's ${quoted(missing)}; the target axes must include every input axis`);
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

// --- slice, pad, flatten, unflatten, conv2d -------------------------------------------------

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);
/** An int as Python's isinstance(v, int) sees a JSON value (booleans are not). One difference
 * JSON.parse hides: a whole float written as 2.0 is an int here and a float there. */
const isInt = (v: unknown): v is number => typeof v === "number" && Number.isInteger(v);
const isComposite = (ref: string): boolean => parseRef(ref).length > 1;

/** geon.core.axes.Axes(...): a result with a reference twice is refused as the server does. */
function axesOf(refs: string[]): string[] {
  const seen = new Set<string>();
  for (const r of refs) {
    if (seen.has(r)) fail("AxisError", `axis "${r}" appears twice in ${formatAxes(refs)}; the axes of a tensor are duplicate-free`);
    seen.add(r);
  }
  return refs;
}

/** Python's slice(start, stop, step).indices(length). */
function sliceIndices(start: number | null, stop: number | null, step: number | null, length: number): [number, number, number] {
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
  return step > 0 ? Math.max(0, Math.ceil((stop - start) / step)) : Math.max(0, Math.ceil((start - stop) / -step));
}

/** ops.py _renames: params.axes of slice and pad, old input axis -> new axis. */
function renames(kname: string, p: Record<string, unknown>, a: string[], res: Resolver): Map<string, string> {
  const raw = "axes" in p ? p.axes : {};
  if (!isObject(raw)) fail("KernelError", `${kname} params "axes" is "${pyRepr(raw)}"; expected an object mapping old axis to new`);
  const out = new Map<string, string>();
  const what = `${kname} params "axes"`;
  for (const [oldText, newText] of Object.entries(raw)) {
    const old = res.ref(oldText, what);
    if (!a.includes(old)) fail("AxisError", `${kname} renames "${old}", which is not an axis of the input; expected one of ${quoted(a)}`);
    out.set(old, res.ref(newText, what));
  }
  return out;
}

/** ops.py _new_axis: the axis a slice or pad of ``old`` yields, ``n`` long. */
function newAxis(kname: string, old: string, n: number, names: Map<string, string>, declared: Declared): string {
  const renamed = names.get(old);
  if (renamed === undefined) {
    const length = refLength(old, declared);
    if (length !== null && length !== n) {
      const verb = kname === "op:slice" ? "slicing" : "padding";
      fail("AxisError", `${verb} axis "${old}" changes its length from ${length} to ${n}; name a new axis for it, e.g. axes={"${old}": "${old}${n}"}`);
    }
    return old;
  }
  const length = refLength(renamed, declared);
  if (length !== null && length !== n) {
    fail("ShapeError", `${kname} maps axis "${old}" to "${renamed}" of length ${length}, but the result has ${n} elements along it; declare "${renamed}" with length ${n}`);
  }
  return renamed;
}

function slice(kname: string, a: string[], p: Record<string, unknown>, res: Resolver, declared: Declared): Derived {
  only(p, ["slices", "axes"], kname);
  const raw = p.slices;
  if (!isObject(raw)) {
    fail("KernelError", `${kname} params "slices" is "${pyRepr(raw)}"; expected an object such as {"H": {"start": 0, "stop": 2, "step": 1}} or {"H": 0}`);
  }
  // per sliced axis: an index (the axis is dropped) or [start, stop, step] as slice.indices gives them
  const specs = new Map<string, number | [number, number, number]>();
  for (const [name, spec] of Object.entries(raw)) {
    const ref = res.ref(name, `${kname} params "slices"`);
    if (!a.includes(ref)) fail("AxisError", `op:slice slices "${ref}", which is not an axis of the input; expected one of ${quoted(a)}`);
    const length = refLength(ref, declared);
    if (isInt(spec)) {
      if (length !== null && !(-length <= spec && spec < length)) {
        fail("ShapeError", `op:slice index ${spec} is out of range for axis "${ref}" of length ${length}; expected ${-length} <= index < ${length}`);
      }
      specs.set(ref, spec >= 0 || length === null ? spec : spec + length);
      continue;
    }
    if (!isObject(spec) || Object.keys(spec).some((key) => !["start", "stop", "step"].includes(key))) {
      fail("KernelError", `op:slice spec "${pyRepr(spec)}" for axis "${ref}" is invalid; expected an integer or {"start", "stop", "step"}`);
    }
    const parts = [spec.start ?? null, spec.stop ?? null, spec.step ?? null];
    for (const v of parts) {
      if (v !== null && !isInt(v)) fail("KernelError", `op:slice spec "${pyRepr(spec)}" for axis "${ref}" has "${pyRepr(v)}"; expected integers or null`);
    }
    if (parts[2] === 0) fail("KernelError", `op:slice step for axis "${ref}" is 0; expected a nonzero integer`);
    if (length === null) fail("ShapeError", `op:slice cannot slice axis "${ref}" before it has a length; bind it first`);
    specs.set(ref, sliceIndices(parts[0] as number | null, parts[1] as number | null, parts[2] as number | null, length));
  }
  const names = renames(kname, p, a, res);
  for (const old of names.keys()) {
    if (!specs.has(old)) fail("AxisError", `op:slice renames "${old}" but does not slice it; rename axes with cast_axes`);
  }
  const result: string[] = [];
  for (const r of a) {
    const spec = specs.get(r);
    if (typeof spec === "number") {
      if (names.has(r)) fail("AxisError", `op:slice drops axis "${r}" with an integer index, so it cannot be renamed`);
      continue;
    }
    if (spec === undefined) {
      result.push(r);
      continue;
    }
    const n = rangeLength(spec);
    if (n === 0) fail("ShapeError", `op:slice selects no elements of axis "${r}"; an axis has length >= 1`);
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

function pad(kname: string, a: string[], p: Record<string, unknown>, res: Resolver, declared: Declared): Derived {
  only(p, ["pad", "axes"], kname);
  const raw = p.pad;
  if (!isObject(raw)) fail("KernelError", `op:pad params "pad" is "${pyRepr(raw)}"; expected an object such as {"H": [1, 1]}`);
  const widths = new Map<string, [number, number]>();
  for (const [name, w] of Object.entries(raw)) {
    const ref = res.ref(name, 'op:pad params "pad"');
    if (!a.includes(ref)) fail("AxisError", `op:pad pads "${ref}", which is not an axis of the input; expected one of ${quoted(a)}`);
    if (!Array.isArray(w) || w.length !== 2 || w.some((v) => !isInt(v) || v < 0)) {
      fail("KernelError", `op:pad widths "${pyRepr(w)}" for axis "${ref}" are invalid; expected [before, after] with integers >= 0`);
    }
    if (refLength(ref, declared) === null) fail("ShapeError", `op:pad cannot pad axis "${ref}" before it has a length; bind it`);
    widths.set(ref, [w[0] as number, w[1] as number]);
  }
  const names = renames(kname, p, a, res);
  const result: string[] = [];
  for (const r of a) {
    const w = widths.get(r);
    if (w) result.push(newAxis(kname, r, refLength(r, declared)! + w[0] + w[1], names, declared));
    else if (names.has(r)) fail("AxisError", `op:pad renames "${r}" but does not pad it; rename with cast_axes`);
    else result.push(r);
  }
  axesOf(result);
  // 0 - before, not -before: no negative zero in the offsets
  return { result, dims: [a.map((r, i) => follows(i, 1, 0 - (widths.get(r)?.[0] ?? 0)))] };
}

function flatten(kname: string, a: string[], p: Record<string, unknown>, res: Resolver): Derived {
  const group = viewAxes(kname, p, res);
  if (group.length < 2) fail("AxisError", `flatten needs at least two adjacent axes; got ${quoted(group)} from ${formatAxes(a)}`);
  const strangers = group.filter((r) => !a.includes(r));
  if (strangers.length) fail("AxisError", `flatten axes ${quoted(strangers)} are not axes of the input; expected adjacent axes from ${quoted(a)}`);
  const first = a.indexOf(group[0]!);
  if (a.slice(first, first + group.length).join("\n") !== group.join("\n")) {
    fail("AxisError", `flatten axes ${quoted(group)} are not adjacent in this order in ${formatAxes(a)}; dimshuffle them next to each other first`);
  }
  // CompositeRef.of: nested composites are flattened into their parts, each part at most once
  const parts = group.flatMap((r) => parseRef(r).map((part) => formatRef([part])));
  const comp = parts.join("*");
  const seen = new Set<string>();
  for (const part of parts) {
    if (seen.has(part)) fail("AxisError", `axis "${part}" appears twice in composite "${comp}"; each part appears once`);
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

function unflatten(kname: string, a: string[], p: Record<string, unknown>, res: Resolver): Derived {
  only(p, ["axes"], kname);
  let chosen: string[];
  if ("axes" in p) {
    chosen = res.refs(p.axes, 'op:unflatten params "axes"');
    for (const r of chosen) {
      if (!isComposite(r) || !a.includes(r)) {
        fail("AxisError", `unflatten axis "${r}" is not a composite axis of the input; expected one of ${quoted(a.filter(isComposite))}`);
      }
    }
  } else {
    chosen = a.filter(isComposite);
    if (!chosen.length) fail("AxisError", `unflatten found no composite axis (such as H*W) in ${formatAxes(a)}; flatten first`);
  }
  const split = (r: string): string[] => parseRef(r).map((part) => formatRef([part]));
  const result = axesOf(a.flatMap((r) => (chosen.includes(r) ? split(r) : [r])));
  const dims = a.map((r): Dim => (chosen.includes(r) ? { terms: [], merged: split(r).map((part): [number, string] => [result.indexOf(part), part]) } : follows(result.indexOf(r))));
  return { result, dims: [dims] };
}

/** ops.py _pair_ints: conv2d's stride or padding, one integer or [height, width]. */
function pairInts(value: unknown, name: string, dflt: number, minimum: number): [number, number] {
  if (value === null || value === undefined) return [dflt, dflt];
  const pair = isInt(value) ? [value, value] : value;
  if (!Array.isArray(pair) || pair.length !== 2 || pair.some((v) => !isInt(v) || v < minimum)) {
    fail("KernelError", `op:conv2d ${name} "${pyRepr(value)}" is invalid; expected an integer >= ${minimum} or [height, width]`);
  }
  return [pair[0] as number, pair[1] as number];
}

function conv2d(kname: string, x: string[], f: string[], p: Record<string, unknown>, res: Resolver, declared: Declared): Derived {
  only(p, ["out_axes", "stride", "padding"], kname);
  const stride = pairInts(p.stride, "stride", 1, 1);
  const padding = pairInts(p.padding, "padding", 0, 0);
  if (!("out_axes" in p)) fail("KernelError", 'op:conv2d needs params "out_axes"; expected the output axes, e.g. ["K", "P", "Q", "N"]');
  const out = res.refs(p.out_axes, 'op:conv2d params "out_axes"');
  noDups(out, 'op:conv2d params "out_axes"');
  const roles = (r: string): string[] => (isComposite(r) ? [] : (declared.get(parseRef(r)[0]!.name)?.roles ?? []));
  const oneRole = (axes: string[], role: string, what: string, exclude: string[] = []): string => {
    const found = axes.filter((r) => roles(r).includes(role) && !exclude.includes(r));
    if (found.length !== 1) {
      const got = found.length ? `several: ${formatAxes(found)}` : "none";
      fail("AxisError", `op:conv2d ${what} needs exactly one axis with role "${role}"; found ${got} among ${formatAxes(axes)}`);
    }
    return found[0]!;
  };
  const c = oneRole(x, "Channel", 'input "x"');
  const h = oneRole(x, "Height", 'input "x"');
  const w = oneRole(x, "Width", 'input "x"');
  const batch = x.filter((r) => r !== c && r !== h && r !== w);
  const fc = f.filter((r) => r === shift(c, -1) || r === shift(c, 1));
  if (fc.length !== 1) {
    fail("AxisError", `op:conv2d filter must carry the input's channel "${c}" as a dual ("${shift(c, -1)}" or "${shift(c, 1)}"); found ${formatAxes(f)}`);
  }
  const fh = oneRole(f, "Height", 'filter "filter"', fc);
  const fw = oneRole(f, "Width", 'filter "filter"', fc);
  const fk = oneRole(f, "Channelout", 'filter "filter"', fc);
  const others = f.filter((r) => ![fc[0], fh, fw, fk].includes(r));
  if (others.length) {
    fail("AxisError", `op:conv2d filter has unexpected axes ${quoted(others)}; expected a dual of the channel and axes with roles Height, Width and Channelout`);
  }
  for (const r of batch) {
    if (!out.includes(r)) fail("AxisError", `op:conv2d out_axes ${quoted(out)} lack the input's batch axis "${r}"`);
  }
  if (!out.includes(fk)) fail("AxisError", `op:conv2d out_axes ${quoted(out)} lack the filter's Channelout axis "${fk}"`);
  const rest = out.filter((r) => !batch.includes(r) && r !== fk);
  const oh = oneRole(rest, "Height", "out_axes");
  const ow = oneRole(rest, "Width", "out_axes");
  const extra = rest.filter((r) => r !== oh && r !== ow);
  if (extra.length) {
    fail("AxisError", `op:conv2d out_axes have unexpected axes ${quoted(extra)}; expected the batch axes, the Channelout axis and one Height and one Width axis`);
  }
  for (const [o, i, win, s, pd] of [
    [oh, h, fh, stride[0], padding[0]],
    [ow, w, fw, stride[1], padding[1]],
  ] as const) {
    const li = refLength(i, declared);
    const lw = refLength(win, declared);
    if (li === null || lw === null) continue;
    const n = Math.floor((li + 2 * pd - lw) / s) + 1;
    if (n < 1) fail("ShapeError", `op:conv2d window "${win}" of length ${lw} is longer than "${i}" (length ${li}) plus padding ${pd} on each side`);
    const lo = refLength(o, declared);
    if (lo !== null && lo !== n) {
      fail("ShapeError", `op:conv2d output axis "${o}" has length ${lo}; the window "${win}" (length ${lw}) over "${i}" (length ${li}) with stride ${s} and padding ${pd} gives ${n}`);
    }
  }
  const col = (r: string): number => out.indexOf(r);
  const xDims = x.map((r): Dim => {
    if (r === c) return whole(c);
    if (r === h) return { ...follows(col(oh), stride[0], 0 - padding[0]), extent: fh };
    if (r === w) return { ...follows(col(ow), stride[1], 0 - padding[1]), extent: fw };
    return follows(col(r));
  });
  const fDims = f.map((r) => (r === fk ? follows(col(fk)) : whole(r)));
  return { result: out, dims: [xDims, fDims] };
}

// --- the derived signature ---------------------------------------------------------------------

export interface OperandDims {
  key: string;
  axes: string[];
  dims: Dim[];
}

export interface Access {
  affineMap: { projection: number[][]; offset: number[] };
  shape: number[];
}

export interface Signature {
  inputs: Record<string, Access[]>;
  outputs: Record<string, Access[]>;
}

/** ops.py _access_json: one operand's IPF from its dims, its tensor's range start and the rank. */
function access(dims: Dim[], start: number[], rank: number, size: (ref: string) => number): Access {
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
 * The derived IPFSignature (DESIGN.md §4, ops.py ``Inference.signature``): a dim that follows
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
): Signature {
  const rank = inf.index.length;
  const sig: Signature = { inputs: {}, outputs: {} };
  inf.operands.forEach((op, i) => {
    (sig.inputs[op.key] ??= []).push(access(op.dims, starts?.[i] ?? [], rank, size));
  });
  sig.outputs.result = [access(inf.output, starts?.[inf.operands.length] ?? [], rank, size)];
  return sig;
}

/**
 * The region each operand reads or writes (ops.py ``Inference.selections``): the projection of
 * the whole index range through its IPF, clipped to the tensor's range. For most kernels it is
 * the whole tensor; for a slice it is the sliced window; a pad reads its whole (smaller) input.
 * ``ranges`` are the operand tensors' ranges in order, then the result's.
 */
export function deriveSelections(sig: Signature, extent: number[], ranges: { start: number[]; end: number[] }[]): { start: number[]; end: number[] }[] {
  const entries = [...Object.values(sig.inputs).flat(), ...(sig.outputs.result ?? [])];
  return entries.map((entry, k) => {
    const range = ranges[k]!;
    const start: number[] = [];
    const end: number[] = [];
    entry.affineMap.projection.forEach((row, r) => {
      let lo = entry.affineMap.offset[r]!;
      let hi = lo;
      row.forEach((c, j) => {
        const n = extent[j]!;
        if (n <= 0) return;
        lo += Math.min(0, c * (n - 1));
        hi += Math.max(0, c * (n - 1));
      });
      const a = Math.max(lo, range.start[r]!);
      start.push(a);
      end.push(Math.max(a, Math.min(hi + entry.shape[r]!, range.end[r]!)));
    });
    return { start, end };
  });
}

/**
 * The result axes of ``kernel`` applied to operands with these axes (by IO key), its index axes
 * and the dims its signature derives from, or the error the server would report, or "server"
 * when the client leaves the derivation to the server.
 */
export function inferAxes(
  catalogue: ReadonlyMap<string, KernelInfo>,
  kernelName: string,
  inputs: Record<string, string[][]>,
  params: unknown,
  declared: Declared,
): Inference {
  try {
    const k = catalogue.get(kernelName);
    if (!k) {
      const first = [...catalogue.keys()].slice(0, 2).map((n) => `"${n}"`).join(", ");
      fail("KernelError", `kernel "${kernelName}" is not in the catalogue; expected one of (${first}, ...), or a custom kernel with an edited IPFSignature`);
    }
    if (!MIRRORED.has(k.name)) return { kind: "server" };
    for (const key of Object.keys(inputs)) {
      if (!k.inputs.includes(key)) fail("KernelError", `${k.name} has no input "${key}"; expected ${quoted(k.inputs)}`);
    }
    for (const key of k.inputs) {
      const items = inputs[key];
      if (!items || items.length === 0) {
        if (k.optional.includes(key)) continue;
        fail("KernelError", `${k.name} needs input "${key}"; expected ${quoted(k.inputs)}`);
      }
      if (!k.variadic && items.length !== 1) fail("KernelError", `${k.name} input "${key}" has ${items.length} tensors; expected exactly one`);
    }
    const operands = k.inputs.flatMap((key) => (inputs[key] ?? []).map((axes) => axes.map(canonical)));
    if (params !== null && params !== undefined && (typeof params !== "object" || Array.isArray(params))) {
      fail("KernelError", `${k.name} params are "${pyRepr(params)}"; expected a JSON object`);
    }
    const p = (params ?? {}) as Record<string, unknown>;
    const res = new Resolver(declared);
    const a = operands[0]!;
    let d: Derived;
    if (k.family === "nary" || k.family === "binary") d = elementwise(k.name, operands, p, res, declared);
    else if (k.family === "unary") {
      only(p, [], k.name);
      d = { result: a, dims: [identity(a.length)] };
    } else if (k.family === "dot") {
      only(p, [], k.name);
      d = dot(a, operands[1]!);
    } else if (k.family === "reduction") d = reduction(k.name, a, p, res);
    else if (k.family === "conv") d = conv2d(k.name, a, operands[1]!, p, res, declared);
    else if (k.name === "op:slice") d = slice(k.name, a, p, res, declared);
    else if (k.name === "op:pad") d = pad(k.name, a, p, res, declared);
    else if (k.name === "op:flatten") d = flatten(k.name, a, p, res);
    else if (k.name === "op:unflatten") d = unflatten(k.name, a, p, res);
    else d = view(k.name, a, p, res, declared);
    const keys = k.inputs.flatMap((key) => (inputs[key] ?? []).map(() => key));
    const ops = d.dims.map((dims, i) => ({ key: keys[i]!, axes: operands[i]!, dims }));
    return { kind: "ok", result: d.result, index: d.index ?? d.result, operands: ops, output: d.output ?? identity(d.result.length) };
  } catch (e) {
    if (e instanceof InferenceError) return { kind: "error", type: e.kind, message: e.message };
    throw e;
  }
}
