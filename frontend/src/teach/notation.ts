// The same computation written four ways beside the stepper (issue 19, item 1): the formula in
// named-index notation with the pairing of each dual spelled out, Python loops (one line per
// loop, in the chosen order, and the body), an einsum string with NumPy, and geon builder code.

import type { Loops, Read } from "./loops";

type Operand = Loops["operands"][number];
/** A dim read through a window (a conv's height or width): more than one loop, or shifted. */
const windowed = (r: Read) => r.terms.length > 1 || r.offset !== 0;
/** ``P·2 + R - 1``: where a windowed dim reads, with ``name`` writing each loop axis. */
function readExpr(r: Read, name: (axis: string) => string, times: string): string {
  const parts = r.terms.map(([a, coef]) => (coef === 1 ? name(a) : `${name(a)}${times}${coef}`));
  const shift = r.offset === 0 ? "" : r.offset > 0 ? ` + ${r.offset}` : ` - ${-r.offset}`;
  return parts.join(" + ") + shift;
}
const windows = (l: Loops) =>
  l.operands.flatMap((o) =>
    o.reads.map((r, i) => ({ o, r, axis: o.axes[i]! })).filter((x) => windowed(x.r)),
  );

const SYMBOL: Record<string, string> = {
  "op:add": " + ",
  "op:subtract": " - ",
  "op:multiply": " · ",
  "op:divide": " / ",
};
const REDUCER: Record<string, string> = {
  "product-sum": "Σ",
  sum: "Σ",
  max: "max",
  min: "min",
  prod: "Π",
  mean: "mean",
};
const BUILDER: Record<string, string> = {
  "op:dot": "dot",
  "op:conv2d": "conv2d",
  "op:add": "add",
  "op:subtract": "subtract",
  "op:multiply": "multiply",
  "op:divide": "divide",
  "op:maximum": "maximum",
  "op:minimum": "minimum",
  "op:sum": "sum",
  "op:max": "max",
  "op:min": "min",
  "op:prod": "prod",
  "op:mean": "mean",
  "op:relu": "relu",
  "op:transpose": "transpose",
  "op:cast_axes": "cast_axes",
  "op:broadcast": "broadcast",
};

const cell = (label: string, axes: string[]) => `${label}[${axes.join(", ")}]`;
/** A Python identifier for a label ("x·y" -> "x_y"). */
export const ident = (label: string) =>
  label.replace(/[^A-Za-z0-9_]/g, "_").replace(/^(\d)/, "_$1") || "t";
/** The loop variable of an axis: its name in lower case. */
export const loopVar = (axis: string) => axis.toLowerCase().replace(/[^a-z0-9_]/g, "_");

/** ``z[H, N] = Σ_W x[H, W-1] · y[W, N]``. */
export function formula(l: Loops): string {
  const reads = l.operands.map((o) =>
    cell(
      o.label,
      o.axes.map((a, i) => (windowed(o.reads[i]!) ? readExpr(o.reads[i]!, (x) => x, "·") : a)),
    ),
  );
  const lhs = cell(l.result.label, l.result.axes);
  const reduced = l.axes.filter((a) => a.reduced).map((a) => a.name);
  if (l.combine === "apply") {
    const symbol = SYMBOL[l.kernel];
    return `${lhs} = ${symbol ? reads.join(symbol) : `${l.kernel.slice(3)}(${reads.join(", ")})`}`;
  }
  const body = l.combine === "product-sum" ? reads.join(" · ") : reads[0]!;
  return `${lhs} = ${REDUCER[l.combine]}_${reduced.join(",")} ${body}`;
}

/** Why the result's axes come out as they do, and which axis pairs with which. */
export function explanation(l: Loops): string[] {
  const lines: string[] = [];
  for (const a of l.axes.filter((x) => x.reduced)) {
    const holders = l.operands.flatMap((o) =>
      o.axes.filter((_, i) => o.dims[i] === a.name).map((r) => `${r} of ${o.label}`),
    );
    lines.push(
      l.combine === "product-sum" && holders.length > 1
        ? `${holders.join(" pairs with ")}: ${l.kernel.slice(3)} multiplies along them and sums over ${a.name}.`
        : `${a.name} is reduced: ${REDUCER[l.combine]} over its ${a.length} values.`,
    );
  }
  for (const { o, r, axis } of windows(l)) {
    const [outer, window] = [r.terms[0]![0], r.terms[r.terms.length - 1]![0]];
    const pad = r.offset < 0 ? `; where that falls outside ${axis} (the padding) it reads 0` : "";
    lines.push(
      `${window} slides a window along ${axis} of ${o.label}: at ${outer} it reads ${axis} = ${readExpr(r, (x) => x, "·")}${pad}.`,
    );
  }
  if (l.kernel === "op:dot")
    lines.push(
      `The result keeps every other axis: (${l.result.axes.join(", ")}), the free axes of the operand holding the lower levels first (params.axes orders them otherwise).`,
    );
  const missing = l.operands.filter(
    (o) => o.axes.length < l.result.axes.length && l.combine === "apply",
  );
  for (const o of missing) {
    const lacks = l.result.axes.filter((r) => !o.axes.includes(r));
    if (lacks.length)
      lines.push(
        `${o.label} has no ${lacks.join(", ")}: it is copied along ${lacks.length === 1 ? "that axis" : "those axes"} (broadcast by name).`,
      );
  }
  if (l.kernel === "op:transpose")
    lines.push(
      "transpose reverses the axes and flips each dual level: W becomes W-1, W-1 becomes W.",
    );
  return lines;
}

/** Python loops in ``order`` (outermost first); the last line is the body. */
export function pythonLoops(l: Loops, order: string[]): string[] {
  const byName = new Map(l.axes.map((a) => [a.name, a]));
  const lines = order.map(
    (n, depth) => `${"    ".repeat(depth)}for ${loopVar(n)} in range(${byName.get(n)!.length}):`,
  );
  const at = (o: Operand) =>
    `${ident(o.label)}[${o.reads.map((r, i) => (windowed(r) ? readExpr(r, loopVar, "*") : loopVar(o.dims[i] ?? "0"))).join(", ")}]`;
  const out = `${ident(l.result.label)}[${l.result.axes.map(loopVar).join(", ")}]`;
  const reads = l.operands.map(at);
  const pad = "    ".repeat(order.length);
  const body =
    l.combine === "product-sum"
      ? `${out} += ${reads.join(" * ")}`
      : l.combine === "sum" || l.combine === "mean"
        ? `${out} += ${reads[0]}`
        : l.combine === "max" || l.combine === "min"
          ? `${out} = ${l.combine}(${out}, ${reads[0]})`
          : l.combine === "prod"
            ? `${out} *= ${reads[0]}`
            : `${out} = ${SYMBOL[l.kernel] ? reads.join(SYMBOL[l.kernel]!.replace("·", "*")) : `${l.kernel.slice(3)}(${reads.join(", ")})`}`;
  const padded = windows(l).filter((w) => w.r.offset < 0);
  const note = padded.length
    ? [
        `# ${[...new Set(padded.map((w) => w.o.label))].map(ident).join(", ")} read as 0 outside its range (zero padding)`,
      ]
    : [];
  return [...note, ...lines, pad + body];
}

/** ``np.einsum("hw,wn->hn", x, y)`` for a dot or a sum, its letters named after the axes (null
 * for other kernels). */
export function einsum(l: Loops): string | null {
  if ((l.combine !== "product-sum" && l.combine !== "sum") || windows(l).length) return null;
  // each loop's letter is its axis name's, lower-cased ("hw,wn->hn"; a dual pairs under its
  // axis's letter); a name that is no letter, or whose letter is taken, gets the next free one
  const letters = new Map<string, string>();
  const letter = (n: string) => {
    if (!letters.has(n)) {
      const taken = new Set(letters.values());
      const own = n.charAt(0).toLowerCase();
      const free =
        /^[a-z]$/.test(own) && !taken.has(own)
          ? own
          : ([..."abcdefghijklmnopqrstuvwxyz"].find(
              (c) =>
                !taken.has(c) &&
                ![...l.axes.map((a) => a.name.charAt(0).toLowerCase())].includes(c),
            ) ?? [..."abcdefghijklmnopqrstuvwxyz"].find((c) => !taken.has(c))!);
      letters.set(n, free);
    }
    return letters.get(n)!;
  };
  const ins = l.operands.map((o) => o.dims.map((d) => letter(d ?? "_")).join(""));
  const outAxes = l.result.axes
    .map((a) => letter(l.axes.find((x) => x.name === a)?.name ?? a))
    .join("");
  return `np.einsum("${ins.join(",")}->${outAxes}", ${l.operands.map((o) => ident(o.label)).join(", ")})`;
}

/** The geon builder call that makes this operation. */
export function builder(l: Loops): string {
  const fn = BUILDER[l.kernel] ?? l.kernel.slice(3);
  const args = l.operands.map((o) => ident(o.label)).join(", ");
  const reduced = l.axes.filter((a) => a.reduced).map((a) => a.name);
  const conv = windows(l);
  const pair = (values: number[]) =>
    new Set(values).size <= 1 ? String(values[0] ?? 0) : `[${values.join(", ")}]`;
  const extra =
    l.kernel === "op:conv2d"
      ? `, out_axes=[${l.result.axes.join(", ")}], stride=${pair(conv.map((w) => w.r.terms[0]![1]))}, padding=${pair(conv.map((w) => -w.r.offset))}`
      : l.combine !== "apply" && l.kernel !== "op:dot"
        ? `, reduction_axes=[${reduced.join(", ")}]`
        : "";
  return `${ident(l.result.label)} = gc.${fn}(${args}${extra}, name="${l.result.label}")`;
}
