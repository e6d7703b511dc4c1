// The inference rule of op:conv2d (DESIGN.md §2; geon.core.ops.conv): the input's Channel, Height
// and Width axes are found by role, the filter pairs the channel through a dual and carries the
// window (Height, Width) and Channelout; params.out_axes names the output, whose lengths follow
// from stride and zero padding. Its projection is a window: stride as the coefficient, minus the
// padding as the offset, the window's length as the shape — so sharding it over Height gives halos.

import { isComposite, parseRef, refLength, shift, type Declared } from "../axes";
import { follows, whole, type Derived, type Dim } from "./inference";
import { fail, formatAxes, pyRepr, quoted } from "./messages";
import { isInt, noDups, only, type Resolver } from "./params";

/** ops/conv.py _pair_ints: conv2d's stride or padding, one integer or [height, width]. */
function pairInts(value: unknown, name: string, dflt: number, minimum: number): [number, number] {
  if (value === null || value === undefined) return [dflt, dflt];
  const pair = isInt(value) ? [value, value] : value;
  if (!Array.isArray(pair) || pair.length !== 2 || pair.some((v) => !isInt(v) || v < minimum)) {
    fail("KernelError", `op:conv2d ${name} "${pyRepr(value)}" is invalid; expected an integer >= ${minimum} or [height, width]`);
  }
  return [pair[0] as number, pair[1] as number];
}

/** op:conv2d over input x and filter f, with out_axes, stride and padding from the params. */
export function conv2d(kname: string, x: string[], f: string[], p: Record<string, unknown>, res: Resolver, declared: Declared): Derived {
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

