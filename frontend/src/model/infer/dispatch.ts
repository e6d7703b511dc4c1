// The client's axis inference (DESIGN.md §2 and §4): inferAxes mirrors geon.core.ops.infer
// (ops/dispatch.py) for every named kernel of the catalogue, message for message. It checks the
// operation's IO against the kernel (ops/catalogue.py's check_io), reads its params and hands
// the operands to the rule of the kernel's family (infer/arithmetic.ts, which op:where shares
// with the n-ary kernels, infer/normalization.ts, infer/views.ts, infer/conv.ts for conv2d and
// the pools, infer/combine.ts for concat and gather); infer/inference.ts derives the same
// IPFSignature from the result. It is tested on the server's own table (tests/core/axis_cases.json). Slice and pad never declare
// axes: the new axis a changed length needs is named in params.axes and must already be
// declared, as on the server.

import { canonical, type Declared } from "../axes";
import { dot, elementwise, reduction, unary } from "./arithmetic";
import { concat, gather } from "./combine";
import { conv2d, pool2d } from "./conv";
import { identity, type Derived, type Inference } from "./inference";
import { fail, InferenceError, pyRepr, quoted } from "./messages";
import { normalization } from "./normalization";
import { dotPartial, reductionPartial } from "./partial";
import { Resolver } from "./params";
import { flatten, pad, slice, unflatten, view } from "./views";

/** A kernel of the catalogue as the server describes it (geon.core.ops.catalogue_json). */
export interface KernelInfo {
  name: string;
  family:
    | "nary"
    | "binary"
    | "unary"
    | "dot"
    | "reduction"
    | "normalization"
    | "view"
    | "conv"
    | "pool"
    | "concat"
    | "where"
    | "gather"
    | "positional";
  inputs: string[];
  outputs: string[];
  variadic: boolean;
  optional: string[];
  named: boolean;
  doc: string;
}

/** The kernels whose inference the client mirrors: every named kernel of the catalogue. */
export const MIRRORED = new Set([
  "op:add",
  "op:multiply",
  "op:maximum",
  "op:minimum",
  "op:subtract",
  "op:divide",
  "op:power",
  "op:negative",
  "op:abs",
  "op:exp",
  "op:log",
  "op:sqrt",
  "op:square",
  "op:tanh",
  "op:sigmoid",
  "op:relu",
  "op:gelu",
  "op:dot",
  "op:dot_partial",
  "op:sum",
  "op:prod",
  "op:max",
  "op:min",
  "op:mean",
  "op:softmax",
  "op:layer_norm",
  "op:cast_axes",
  "op:broadcast",
  "op:dimshuffle",
  "op:transpose",
  "op:slice",
  "op:pad",
  "op:flatten",
  "op:unflatten",
  "op:conv2d",
  "op:max_pool2d",
  "op:avg_pool2d",
  "op:concat",
  "op:gather",
  "op:where",
]);

/** ops/catalogue.py check_io: every input the kernel has, each with one tensor unless it is variadic. */
function checkIo(k: KernelInfo, inputs: Record<string, string[][]>): void {
  for (const key of Object.keys(inputs)) {
    if (!k.inputs.includes(key))
      fail("KernelError", `${k.name} has no input "${key}"; expected ${quoted(k.inputs)}`);
  }
  for (const key of k.inputs) {
    const items = inputs[key];
    if (!items || items.length === 0) {
      if (k.optional.includes(key)) continue;
      fail("KernelError", `${k.name} needs input "${key}"; expected ${quoted(k.inputs)}`);
    }
    if (!k.variadic && items.length !== 1)
      fail(
        "KernelError",
        `${k.name} input "${key}" has ${items.length} tensors; expected exactly one`,
      );
  }
}

/** The rule of the kernel's family over its operands (in IO-key order, with their keys). */
function derive(
  k: KernelInfo,
  operands: string[][],
  keys: string[],
  p: Record<string, unknown>,
  declared: Declared,
): Derived {
  const res = new Resolver(declared);
  const a = operands[0]!;
  switch (k.family) {
    case "normalization":
      return normalization(
        k.name,
        a,
        operands.slice(1).map((b, i) => [keys[i + 1]!, b]),
        p,
        res,
      );
    case "nary":
    case "binary":
    case "where":
      return elementwise(k.name, operands, p, res, declared);
    case "unary":
      return unary(k.name, a, p);
    case "dot":
      if (k.name === "op:dot_partial") return dotPartial(k.name, a, operands[1]!, p, res, declared);
      return dot(k.name, a, operands[1]!, p, res);
    case "reduction":
      return "parts" in p
        ? reductionPartial(k.name, a, p, res, declared)
        : reduction(k.name, a, p, res);
    case "conv":
      return conv2d(k.name, a, operands[1]!, p, res, declared);
    case "pool":
      return pool2d(k.name, a, p, res, declared);
    case "concat":
      return concat(k.name, operands, p, res, declared);
    case "gather":
      return gather(k.name, a, operands[1]!, p, res);
  }
  if (k.name === "op:slice") return slice(k.name, a, p, res, declared);
  if (k.name === "op:pad") return pad(k.name, a, p, res, declared);
  if (k.name === "op:flatten") return flatten(k.name, a, p, res);
  if (k.name === "op:unflatten") return unflatten(k.name, a, p, res);
  return view(k.name, a, p, res, declared);
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
      const first = [...catalogue.keys()]
        .slice(0, 2)
        .map((n) => `"${n}"`)
        .join(", ");
      fail(
        "KernelError",
        `kernel "${kernelName}" is not in the catalogue; expected one of (${first}, ...), or a custom kernel with an edited IPFSignature`,
      );
    }
    if (!MIRRORED.has(k.name)) return { kind: "server" };
    checkIo(k, inputs);
    const operands = k.inputs.flatMap((key) =>
      (inputs[key] ?? []).map((axes) => axes.map(canonical)),
    );
    if (
      params !== null &&
      params !== undefined &&
      (typeof params !== "object" || Array.isArray(params))
    ) {
      fail("KernelError", `${k.name} params are "${pyRepr(params)}"; expected a JSON object`);
    }
    const keys = k.inputs.flatMap((key) => (inputs[key] ?? []).map(() => key));
    const d = derive(k, operands, keys, (params ?? {}) as Record<string, unknown>, declared);
    const ops = d.dims.map((dims, i) => ({ key: keys[i]!, axes: operands[i]!, dims }));
    return {
      kind: "ok",
      result: d.result,
      index: d.index ?? d.result,
      operands: ops,
      output: d.output ?? identity(d.result.length),
    };
  } catch (e) {
    if (e instanceof InferenceError) return { kind: "error", type: e.kind, message: e.message };
    throw e;
  }
}
