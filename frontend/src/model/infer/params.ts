// Reading a kernel's params as the server does (geon.core.ops.params: Resolver, only_params,
// no_duplicates): axis references resolved against the declared axes, unknown keys refused,
// references named twice refused, and JSON values told apart as Python sees them. Each refusal
// is the server's message.

import { formatRef, parseRef, type Declared } from "../axes";
import { fail, formatAxes, pyRepr, quoted } from "./messages";

/** Reads the references a param names, refusing one whose axis is not declared. */
export class Resolver {
  constructor(private readonly declared: Declared) {}

  ref(item: unknown, what: string): string {
    if (typeof item !== "string")
      fail(
        "KernelError",
        `${what} has "${pyRepr(item)}"; expected an axis reference such as "W-1"`,
      );
    const parts = parseRef(item);
    for (const p of parts) {
      if (!this.declared.has(p.name))
        fail("AxisError", `axis "${p.name}" in "${item}" is not declared; declare it first`);
    }
    return formatRef(parts);
  }

  refs(items: unknown, what: string): string[] {
    if (!Array.isArray(items))
      fail("KernelError", `${what} is "${pyRepr(items)}"; expected a list of axis references`);
    return items.map((i) => this.ref(i, what));
  }
}

/** Refuses any param of ``kname`` not in ``allowed``. */
export function only(params: Record<string, unknown>, allowed: string[], kname: string): void {
  for (const key of Object.keys(params)) {
    if (!allowed.includes(key)) {
      fail(
        "KernelError",
        `${kname} has unknown param "${key}"; expected ${allowed.length ? quoted(allowed) : "no params"}`,
      );
    }
  }
}

/** ops/params.py axes_of_input: refuses references that are not axes of the input ``a``. */
export function axesOfInput(refs: string[], a: string[], what: string): void {
  const strangers = refs.filter((r) => !a.includes(r));
  if (strangers.length) {
    fail(
      "AxisError",
      `${what} ${quoted(strangers)} ${strangers.length === 1 ? "is not an axis" : "are not axes"} of the input; expected axes from ${quoted(a)}`,
    );
  }
}

/** Refuses a reference named twice in one param. */
export function noDups(refs: string[], what: string): void {
  const seen = new Set<string>();
  for (const r of refs) {
    if (seen.has(r)) fail("AxisError", `axis "${r}" appears twice in ${what}; name each axis once`);
    seen.add(r);
  }
}

/** geon.core.axes.Axes(...): a result with a reference twice is refused as the server does. */
export function axesOf(refs: string[]): string[] {
  const seen = new Set<string>();
  for (const r of refs) {
    if (seen.has(r))
      fail(
        "AxisError",
        `axis "${r}" appears twice in ${formatAxes(refs)}; the axes of a tensor are duplicate-free`,
      );
    seen.add(r);
  }
  return refs;
}

export const isObject = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === "object" && !Array.isArray(v);

/** An int as Python's isinstance(v, int) sees a JSON value (booleans are not). One difference
 * JSON.parse hides: a whole float written as 2.0 is an int here and a float there. */
export const isInt = (v: unknown): v is number => typeof v === "number" && Number.isInteger(v);
