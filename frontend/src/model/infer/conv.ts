// The inference rules of op:conv2d and the pooling kernels op:max_pool2d and op:avg_pool2d
// (DESIGN.md §2; geon.core.ops.conv): the input's Channel, Height and Width axes are found by
// role, the filter pairs the channel through a dual and carries the window (Height, Width) and
// Channelout; params.out_axes names the output, whose lengths follow from stride and zero
// padding. A pool's window comes from params.kernel_size instead of a filter, its stride defaults
// to the window, and its other input axes pass through to out_axes. Both projections are windows:
// stride as the coefficient, minus the padding as the offset, the window's length as the shape —
// so sharding them over Height gives halos.

import { isComposite, parseRef, refLength, shift, type Declared } from "../axes";
import { follows, whole, type Derived, type Dim } from "./inference";
import { fail, formatAxes, pyRepr, quoted } from "./messages";
import { isInt, noDups, only, type Resolver } from "./params";

/** ops/conv.py _pair_ints: a stride, padding, kernel_size or dilation, one integer or [height, width]. */
function pairInts(
  value: unknown,
  name: string,
  dflt: number | [number, number],
  minimum: number,
  kname = "op:conv2d",
): [number, number] {
  if (value === null || value === undefined) return typeof dflt === "number" ? [dflt, dflt] : dflt;
  const pair = isInt(value) ? [value, value] : value;
  if (!Array.isArray(pair) || pair.length !== 2 || pair.some((v) => !isInt(v) || v < minimum)) {
    fail(
      "KernelError",
      `${kname} params "${name}" is "${pyRepr(value)}"; expected an integer >= ${minimum} or [height, width]`,
    );
  }
  return [pair[0] as number, pair[1] as number];
}

/** ops/conv.py _one_role: the one axis of ``axes`` (none of ``exclude``) whose declaration has ``role``. */
function oneRole(
  kname: string,
  declared: Declared,
  axes: string[],
  role: string,
  what: string,
  exclude: string[] = [],
): string {
  const roles = (r: string): string[] =>
    isComposite(r) ? [] : (declared.get(parseRef(r)[0]!.name)?.roles ?? []);
  const found = axes.filter((r) => roles(r).includes(role) && !exclude.includes(r));
  if (found.length !== 1) {
    const got = found.length ? `several: ${formatAxes(found)}` : "none";
    fail(
      "AxisError",
      `${kname} ${what} needs exactly one axis with role "${role}"; found ${got} among ${formatAxes(axes)}`,
    );
  }
  return found[0]!;
}

/** ops/conv.py _check_window: a window of ``win`` over ``i`` gives (len(i) + 2·pad − win) // s + 1
 * cells, at least 1 and ``o``'s length when it has one; ``named`` is how the window reads in the two messages. */
function checkWindow(
  kname: string,
  o: string,
  i: string,
  win: number,
  s: number,
  pd: number,
  named: [string, string],
  declared: Declared,
): void {
  const li = refLength(i, declared);
  if (li === null) return;
  const n = Math.floor((li + 2 * pd - win) / s) + 1;
  if (n < 1)
    fail(
      "ShapeError",
      `${kname} ${named[0]} is longer than "${i}" (length ${li}) plus padding ${pd} on each side`,
    );
  const lo = refLength(o, declared);
  if (lo !== null && lo !== n) {
    fail(
      "ShapeError",
      `${kname} output axis "${o}" has length ${lo}; ${named[1]} over "${i}" (length ${li}) with stride ${s} and padding ${pd} gives ${n}`,
    );
  }
}

/** op:conv2d over input x and filter f, with out_axes, stride and padding from the params. */
export function conv2d(
  kname: string,
  x: string[],
  f: string[],
  p: Record<string, unknown>,
  res: Resolver,
  declared: Declared,
): Derived {
  only(p, ["out_axes", "stride", "padding"], kname);
  const stride = pairInts(p.stride, "stride", 1, 1);
  const padding = pairInts(p.padding, "padding", 0, 0);
  if (!("out_axes" in p))
    fail(
      "KernelError",
      'op:conv2d needs params "out_axes"; expected the output axes, e.g. ["K", "P", "Q", "N"]',
    );
  const out = res.refs(p.out_axes, 'op:conv2d params "out_axes"');
  noDups(out, 'op:conv2d params "out_axes"');
  const role = (axes: string[], r: string, what: string, exclude: string[] = []): string =>
    oneRole("op:conv2d", declared, axes, r, what, exclude);
  const c = role(x, "Channel", 'input "x"');
  const h = role(x, "Height", 'input "x"');
  const w = role(x, "Width", 'input "x"');
  const batch = x.filter((r) => r !== c && r !== h && r !== w);
  const fc = f.filter((r) => r === shift(c, -1) || r === shift(c, 1));
  if (fc.length !== 1) {
    fail(
      "AxisError",
      `op:conv2d filter must carry the input's channel "${c}" as a dual ("${shift(c, -1)}" or "${shift(c, 1)}"); found ${formatAxes(f)}`,
    );
  }
  const fh = role(f, "Height", 'filter "filter"', fc);
  const fw = role(f, "Width", 'filter "filter"', fc);
  const fk = role(f, "Channelout", 'filter "filter"', fc);
  const others = f.filter((r) => ![fc[0], fh, fw, fk].includes(r));
  if (others.length) {
    fail(
      "AxisError",
      `op:conv2d filter has unexpected axes ${quoted(others)}; expected a dual of the channel and axes with roles Height, Width and Channelout`,
    );
  }
  for (const r of batch) {
    if (!out.includes(r))
      fail("AxisError", `op:conv2d out_axes ${quoted(out)} lack the input's batch axis "${r}"`);
  }
  if (!out.includes(fk))
    fail(
      "AxisError",
      `op:conv2d out_axes ${quoted(out)} lack the filter's Channelout axis "${fk}"`,
    );
  const rest = out.filter((r) => !batch.includes(r) && r !== fk);
  const oh = role(rest, "Height", "out_axes");
  const ow = role(rest, "Width", "out_axes");
  const extra = rest.filter((r) => r !== oh && r !== ow);
  if (extra.length) {
    fail(
      "AxisError",
      `op:conv2d out_axes have unexpected axes ${quoted(extra)}; expected the batch axes, the Channelout axis and one Height and one Width axis`,
    );
  }
  for (const [o, i, win, s, pd] of [
    [oh, h, fh, stride[0], padding[0]],
    [ow, w, fw, stride[1], padding[1]],
  ] as const) {
    const lw = refLength(win, declared);
    if (lw === null) continue;
    checkWindow(
      kname,
      o,
      i,
      lw,
      s,
      pd,
      [`window "${win}" of length ${lw}`, `the window "${win}" (length ${lw})`],
      declared,
    );
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

/** ops/conv.py POOL_PARAMS: the params of op:max_pool2d; op:avg_pool2d adds count_include_pad. */
const POOL_PARAMS = ["out_axes", "kernel_size", "stride", "padding", "dilation", "ceil_mode"];

/** ops/conv.py _pool_options: dilation other than 1 and ceil_mode other than false are refused, naming the value. */
function poolOptions(kname: string, p: Record<string, unknown>): void {
  if ("dilation" in p) {
    const [dh, dw] = pairInts(p.dilation, "dilation", 1, 1, kname);
    if (dh !== 1 || dw !== 1) {
      fail(
        "KernelError",
        `${kname} params "dilation" is "${pyRepr(p.dilation)}"; geon pools with dilation 1 only (windows of adjacent cells)`,
      );
    }
  }
  if ("ceil_mode" in p && p.ceil_mode !== false) {
    fail(
      "KernelError",
      `${kname} params "ceil_mode" is "${pyRepr(p.ceil_mode)}"; geon pools with ceil_mode false only (the output length rounds down: (length + 2*padding - kernel_size) // stride + 1)`,
    );
  }
}

/** op:max_pool2d / op:avg_pool2d over the input's Height and Width axes (roles): out_axes,
 * kernel_size, stride (default kernel_size), padding (less than the window) and, for avg, count_include_pad. */
export function pool2d(
  kname: string,
  x: string[],
  p: Record<string, unknown>,
  res: Resolver,
  declared: Declared,
): Derived {
  const avg = kname === "op:avg_pool2d";
  only(p, avg ? [...POOL_PARAMS, "count_include_pad"] : POOL_PARAMS, kname);
  poolOptions(kname, p);
  if (!("kernel_size" in p))
    fail("KernelError", `${kname} needs params "kernel_size"; expected an integer or [kh, kw]`);
  const size = pairInts(p.kernel_size, "kernel_size", 1, 1, kname);
  const stride = pairInts(p.stride, "stride", size, 1, kname);
  const padding = pairInts(p.padding, "padding", 0, 0, kname);
  if (padding[0] >= size[0] || padding[1] >= size[1]) {
    fail(
      "KernelError",
      `${kname} padding "${pyRepr(padding)}" is not less than kernel_size "${pyRepr(size)}"; expected padding < kernel_size, so every window holds a cell of the input`,
    );
  }
  const include = "count_include_pad" in p ? p.count_include_pad : true;
  if (avg && typeof include !== "boolean")
    fail(
      "KernelError",
      `${kname} params "count_include_pad" is "${pyRepr(include)}"; expected true or false`,
    );
  if (!("out_axes" in p))
    fail(
      "KernelError",
      `${kname} needs params "out_axes"; expected the output axes, e.g. ["N", "C", "P", "Q"]`,
    );
  const out = res.refs(p.out_axes, `${kname} params "out_axes"`);
  noDups(out, `${kname} params "out_axes"`);
  const role = (axes: string[], r: string, what: string): string =>
    oneRole(kname, declared, axes, r, what);
  const h = role(x, "Height", 'input "tensor"');
  const w = role(x, "Width", 'input "tensor"');
  const kept = x.filter((r) => r !== h && r !== w);
  for (const r of kept) {
    if (!out.includes(r))
      fail("AxisError", `${kname} out_axes ${quoted(out)} lack the input's axis "${r}"`);
  }
  const rest = out.filter((r) => !kept.includes(r));
  const oh = role(rest, "Height", "out_axes");
  const ow = role(rest, "Width", "out_axes");
  const extra = rest.filter((r) => r !== oh && r !== ow);
  if (extra.length) {
    fail(
      "AxisError",
      `${kname} out_axes have unexpected axes ${quoted(extra)}; expected the input's axes other than Height and Width, and one Height and one Width axis`,
    );
  }
  checkWindow(
    kname,
    oh,
    h,
    size[0],
    stride[0],
    padding[0],
    [`window of length ${size[0]}`, `a window of ${size[0]}`],
    declared,
  );
  checkWindow(
    kname,
    ow,
    w,
    size[1],
    stride[1],
    padding[1],
    [`window of length ${size[1]}`, `a window of ${size[1]}`],
    declared,
  );
  const col = (r: string): number => out.indexOf(r);
  const dims = x.map((r): Dim => {
    if (r === h) return { ...follows(col(oh), stride[0], 0 - padding[0]), extent: size[0] };
    if (r === w) return { ...follows(col(ow), stride[1], 0 - padding[1]), extent: size[1] };
    return follows(col(r));
  });
  return { result: out, dims: [dims] };
}
