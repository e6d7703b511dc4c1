// Named axes on the client (DESIGN.md §2): references such as "W-1", and the axis inference of
// the kernels the editor predicts before the server answers. It mirrors geon.core.ops.infer for
// the element-wise, unary, dot, transpose, reduction and relabelling kernels, message for
// message; it is tested against the server's own table (tests/core/axis_cases.json). Kernels it
// does not mirror (slice, pad, flatten, unflatten, conv2d) answer "server": the editor waits for
// the server's inference instead of guessing.

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

const REF_PART = /^\s*([A-Za-z_][A-Za-z0-9_]*)\s*(?:([+-])\s*([0-9]+))?\s*$/;
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

function parseRefUncached(text: string): RefPart[] {
  return text.split("*").map((part) => {
    const m = REF_PART.exec(part);
    if (!m) {
      throw new InferenceError(
        "AxisError",
        `axis reference "${text}" is invalid; expected a name with an optional dual level, e.g. "W", "W-1", "W+1", or a composite "H*W"`,
      );
    }
    const level = m[2] === undefined ? 0 : Number(m[3]) * (m[2] === "+" ? 1 : -1);
    return { name: m[1]!, level };
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

/** The kernels whose inference the client mirrors. */
export const MIRRORED = new Set([
  "op:add", "op:multiply", "op:maximum", "op:minimum", "op:subtract", "op:divide", "op:power",
  "op:negative", "op:abs", "op:exp", "op:log", "op:sqrt", "op:square", "op:tanh", "op:sigmoid", "op:relu",
  "op:dot", "op:sum", "op:prod", "op:max", "op:min", "op:mean",
  "op:cast_axes", "op:broadcast", "op:dimshuffle", "op:transpose",
]);

/** Result axes, and per operand (in IO-key order) the result column each dim follows, or null
 * for a contracted or reduced dim. */
interface Derived {
  result: string[];
  dims: (number | null)[][];
}

export type Inference = { kind: "ok"; result: string[]; operands: OperandDims[] } | { kind: "error"; type: ErrorType; message: string } | { kind: "server" };

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
    return { result: order, dims: maps.map((m) => m.map((i) => perm[i]!)) };
  }
  return { result, dims: maps };
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
    dims: [x.map((a, i) => (px.has(i) ? null : result.indexOf(a))), y.map((b, j) => (py.has(j) ? null : result.indexOf(b)))],
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
  return { result, dims: [a.map((r) => (result.includes(r) ? result.indexOf(r) : null))] };
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
  const placed = (result: string[]): Derived => ({ result, dims: [a.map((r) => result.indexOf(r))] });
  if (kname === "op:transpose") {
    only(p, [], kname);
    return { result: [...a].reverse().map(transposeRef), dims: [a.map((_, i) => a.length - 1 - i)] };
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
    return { result: target, dims: [a.map((_, i) => i)] };
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

export interface OperandDims {
  key: string;
  axes: string[];
  columns: (number | null)[];
}

interface Access {
  affineMap: { projection: number[][]; offset: number[] };
  shape: number[];
}

export interface Signature {
  inputs: Record<string, Access[]>;
  outputs: Record<string, Access[]>;
}

/**
 * The derived IPFSignature (DESIGN.md §4): a dim that follows index column ``c`` has a 1 there;
 * a contracted or reduced dim is a zero row whose shape is its full length; the offset is the
 * selection's start. ``starts`` are the operands' starts in order, then the result's.
 */
export function deriveSignature(inf: { result: string[]; operands: OperandDims[] }, declared: Declared, starts?: number[][]): Signature {
  const rank = inf.result.length;
  const sig: Signature = { inputs: {}, outputs: {} };
  inf.operands.forEach((op, i) => {
    const start = starts?.[i] ?? op.axes.map(() => 0);
    const projection = op.columns.map((c) => Array.from({ length: rank }, (_, j) => (j === c ? 1 : 0)));
    const shape = op.columns.map((c, d) => (c === null ? (refLength(op.axes[d]!, declared) ?? 1) : 1));
    (sig.inputs[op.key] ??= []).push({ affineMap: { projection, offset: start.slice(0, op.axes.length) }, shape });
  });
  const out = starts?.[inf.operands.length] ?? inf.result.map(() => 0);
  sig.outputs.result = [
    {
      affineMap: { projection: inf.result.map((_, r) => Array.from({ length: rank }, (_, j) => (j === r ? 1 : 0))), offset: out },
      shape: inf.result.map(() => 1),
    },
  ];
  return sig;
}

/**
 * The result axes of ``kernel`` applied to operands with these axes (by IO key), or the error
 * the server would report, or "server" when the client does not mirror this kernel.
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
    let d: Derived;
    if (k.family === "nary" || k.family === "binary") d = elementwise(k.name, operands, p, res, declared);
    else if (k.family === "unary") {
      only(p, [], k.name);
      d = { result: operands[0]!, dims: [operands[0]!.map((_, i) => i)] };
    } else if (k.family === "dot") {
      only(p, [], k.name);
      d = dot(operands[0]!, operands[1]!);
    } else if (k.family === "reduction") d = reduction(k.name, operands[0]!, p, res);
    else d = view(k.name, operands[0]!, p, res, declared);
    const keys = k.inputs.flatMap((key) => (inputs[key] ?? []).map(() => key));
    const ops = d.dims.map((columns, i) => ({ key: keys[i]!, axes: operands[i]!, columns }));
    return { kind: "ok", result: d.result, operands: ops };
  } catch (e) {
    if (e instanceof InferenceError) return { kind: "error", type: e.kind, message: e.message };
    throw e;
  }
}
