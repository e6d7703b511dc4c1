// The inference rules of the arithmetic families (DESIGN.md §2; geon.core.ops.arithmetic):
// element-wise (n-ary, binary, unary), dot and reductions. An n-ary element-wise result takes the
// first operand's axes, then each next operand's new ones (matching by identity, then by axis
// class and length); a unary kernel keeps its operand's axes (op:gelu reads params.approximate); dot pairs A^k with A^(k+1) across
// its operands and sums them; a reduction partitions the input's axes into reduction_axes and
// out_axes.

import { parseRef, shift, type Declared, type RefPart } from "../axes";
import { follows, identity, whole, type Derived } from "./inference";
import { fail, pyRepr, quoted } from "./messages";
import { axesOfInput, noDups, only, type Resolver } from "./params";

/** A unary kernel: the result has its operand's axes, each read at its own index; op:gelu's
 * params.approximate is "none" (the exact erf form, the default) or "tanh". */
export function unary(kname: string, a: string[], p: Record<string, unknown>): Derived {
  if (kname === "op:gelu") {
    only(p, ["approximate"], kname);
    const form = "approximate" in p ? p.approximate : "none";
    if (form !== "none" && form !== "tanh") {
      fail(
        "KernelError",
        `op:gelu params "approximate" is "${pyRepr(form)}"; expected "none" (the exact erf form) or "tanh"`,
      );
    }
  } else {
    only(p, [], kname);
  }
  return { result: a, dims: [identity(a.length)] };
}

/** An n-ary or binary element-wise kernel; ``params.axes`` may name another order of the result. */
export function elementwise(
  kname: string,
  operands: string[][],
  p: Record<string, unknown>,
  res: Resolver,
  declared: Declared,
): Derived {
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
          if (
            ap &&
            ad &&
            ap.name !== rp.name &&
            ad.cls === rd.cls &&
            ad.length != null &&
            ad.length === rd.length &&
            !claimed.has(a)
          ) {
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
  const order = resultOrder(kname, result, p, res);
  if (order) {
    const perm = result.map((r) => order.indexOf(r));
    return { result: order, dims: maps.map((m) => m.map((i) => follows(perm[i]!))) };
  }
  return { result, dims: maps.map((m) => m.map((i) => follows(i))) };
}

/** params.axes: another order of the inferred result axes (null when not given), or an AxisError naming what is missing or extra. */
export function resultOrder(
  kname: string,
  result: string[],
  p: Record<string, unknown>,
  res: Resolver,
): string[] | null {
  if (!("axes" in p)) return null;
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
  return order;
}

/** op:dot: pairs, then x's free axes and y's (or y's then x's when y holds every lower level), or params.axes: another order of them. */
export function dot(
  kname: string,
  x: string[],
  y: string[],
  p: Record<string, unknown>,
  res?: Resolver,
): Derived {
  only(p, ["axes"], kname);
  const pairs: [number, number, "x" | "y"][] = [];
  const yPartner = new Map<number, number>();
  x.forEach((a, i) => {
    const up = shift(a, 1);
    const down = shift(a, -1);
    const found = y.flatMap((b, j) => (b === up || b === down ? [[j, b] as const] : []));
    if (found.length > 1) {
      fail(
        "AxisError",
        `axis "${a}" of x could pair with both ${quoted(found.map(([, b]) => b))} of y; keep only one of them, e.g. "${found[0]![1]}"`,
      );
    }
    const hit = found[0];
    if (hit) {
      const [j, b] = hit;
      const prior = yPartner.get(j);
      if (prior !== undefined) {
        fail(
          "AxisError",
          `axis "${b}" of y could pair with both "${x[prior]}" and "${a}" of x; keep only one of them, e.g. "${x[prior]}"`,
        );
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
      fail(
        "AxisError",
        `axis "${a}" appears in both operands at level ${level}; mark one side as a dual, e.g. ${shift(a, -1)}`,
      );
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
  const natural = sides.has("y") && sides.size === 1 ? [...freeY, ...freeX] : [...freeX, ...freeY];
  const result = (res && resultOrder(kname, natural, p, res)) || natural;
  return {
    result,
    dims: [
      x.map((a, i) => (px.has(i) ? whole(a) : follows(result.indexOf(a)))),
      y.map((b, j) => (py.has(j) ? whole(b) : follows(result.indexOf(b)))),
    ],
  };
}

/** sum, prod, max, min, mean: reduction_axes and/or out_axes, which partition the input's axes. */
export function reduction(
  kname: string,
  a: string[],
  p: Record<string, unknown>,
  res: Resolver,
): Derived {
  only(p, ["reduction_axes", "out_axes"], kname);
  const red = "reduction_axes" in p ? res.refs(p.reduction_axes, `${kname} reduction_axes`) : null;
  let out = "out_axes" in p ? res.refs(p.out_axes, `${kname} out_axes`) : null;
  for (const [name, group] of [
    ["reduction_axes", red],
    ["out_axes", out],
  ] as const) {
    if (group === null) continue;
    noDups(group, `${kname} ${name}`);
    axesOfInput(group, a, `${kname} ${name}`);
  }
  if (red !== null && out !== null) {
    const both = red.filter((r) => out!.includes(r));
    if (both.length) {
      fail(
        "AxisError",
        `${kname} axes ${quoted(both)} appear in both reduction_axes and out_axes; each input axis goes to exactly one of them`,
      );
    }
    const neither = a.filter((r) => !red.includes(r) && !out!.includes(r));
    if (neither.length) {
      fail(
        "AxisError",
        `${kname} input axes ${quoted(neither)} are in neither reduction_axes nor out_axes; each input axis goes to exactly one of them`,
      );
    }
  }
  if (out === null) {
    const reduced = red ?? a;
    out = a.filter((r) => !reduced.includes(r));
  }
  const result = out;
  return {
    result,
    dims: [a.map((r) => (result.includes(r) ? follows(result.indexOf(r)) : whole(r)))],
  };
}
