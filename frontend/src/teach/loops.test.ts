import { describe, expect, it } from "vitest";
import { refLength, type AxisDecl } from "../model/axes";
import { CATALOGUE } from "../model/catalogue";
import { inferAxes } from "../model/infer/dispatch";
import { loopsOf, sampleValue, steps, type Loops } from "./loops";

const declared = (lengths: Record<string, number>) =>
  new Map<string, AxisDecl>(
    Object.entries(lengths).map(([name, length]) => [name, { name, length }]),
  );

function loops(
  kernel: string,
  inputs: Record<string, string[][]>,
  lengths: Record<string, number>,
  params: unknown = {},
): Loops {
  const d = declared(lengths);
  const inf = inferAxes(CATALOGUE, kernel, inputs, params, d);
  if (inf.kind !== "ok") throw new Error(JSON.stringify(inf));
  const labels = Object.values(inputs)
    .flat()
    .map((_, i) => `t${i}`);
  return loopsOf(kernel, inf, labels, "z", (ref) => refLength(ref, d) ?? 1);
}

/** The result cells as the last write of each left them. */
function written(all: ReturnType<typeof steps>): Map<string, number> {
  const found = new Map<string, number>();
  for (const s of all) if (s.writes) found.set(s.writes.join(","), s.acc);
  return found;
}

describe("the loops of a dot (H, W-1) · (W, N), 2x3 · 3x2", () => {
  const dot = loops("op:dot", { x: [["H", "W-1"]], y: [["W", "N"]] }, { H: 2, W: 3, N: 2 });

  it("loops over the result's axes, then the contracted W", () => {
    expect(dot.axes.map((a) => `${a.name}${a.reduced ? "*" : ""}=${a.length}`)).toEqual([
      "H=2",
      "N=2",
      "W*=3",
    ]);
  });

  it("visits 12 multiply-adds in order, reading x[h, w] and y[w, n], writing z[h, n] after the last w", () => {
    const all = steps(dot);
    expect(all).toHaveLength(12);
    expect(all.slice(0, 4).map((s) => [s.index.H, s.index.N, s.index.W])).toEqual([
      [0, 0, 0],
      [0, 0, 1],
      [0, 0, 2],
      [0, 1, 0],
    ]);
    expect(all[1]!.reads).toEqual([
      [0, 1],
      [1, 0],
    ]);
    expect(all.map((s) => (s.writes ? s.writes.join(",") : "")).filter(Boolean)).toEqual([
      "0,0",
      "0,1",
      "1,0",
      "1,1",
    ]);
    const x = (h: number, w: number) => sampleValue(0, h * 3 + w);
    const y = (w: number, n: number) => sampleValue(1, w * 2 + n);
    expect(all[2]!.acc).toBe(x(0, 0) * y(0, 0) + x(0, 1) * y(1, 0) + x(0, 2) * y(2, 0));
  });

  it("gives the same result in another loop order (W outermost)", () => {
    const outer = steps(dot, ["W", "H", "N"]);
    expect(outer).toHaveLength(12);
    expect(outer.slice(0, 2).map((s) => [s.index.W, s.index.H, s.index.N])).toEqual([
      [0, 0, 0],
      [0, 0, 1],
    ]);
    expect(written(outer)).toEqual(written(steps(dot)));
    expect(outer.filter((s) => s.writes).every((s) => s.index.W === 2)).toBe(true);
  });
});

describe("a broadcast add and a rank-4 dot", () => {
  it("copies b along the axis it lacks: (H, W) + (W)", () => {
    const add = loops("op:add", { tensors: [["H", "W"], ["W"]] }, { H: 2, W: 3 });
    const all = steps(add);
    expect(all).toHaveLength(6);
    expect(all.filter((s) => s.index.W === 1).map((s) => s.reads[1])).toEqual([[1], [1]]);
    expect(all.every((s) => s.writes !== null && s.acc === s.values[0]! + s.values[1]!)).toBe(true);
  });

  it("contracts two pairs of a rank-4 dot", () => {
    const dot = loops(
      "op:dot",
      { x: [["M", "W-1", "H-1", "C-1"]], y: [["C", "H", "W", "N"]] },
      { M: 2, W: 2, H: 2, C: 2, N: 2 },
    );
    expect(
      dot.axes
        .filter((a) => a.reduced)
        .map((a) => a.name)
        .sort(),
    ).toEqual(["C", "H", "W"]);
    const all = steps(dot);
    expect(all).toHaveLength(32);
    expect(all.filter((s) => s.writes)).toHaveLength(4);
  });

  it("refuses a loop nest too long to step through, naming the axes", () => {
    const big = loops("op:dot", { x: [["H", "W-1"]], y: [["W", "N"]] }, { H: 64, W: 64, N: 64 });
    expect(() => steps(big)).toThrow(/262144 steps \(H=64, N=64, W=64\)/);
  });
});

describe("a conv2d, stepped through its window", () => {
  // x[N, C, H, W] * f[K, C-1, R, S] -> z[K, P, Q, N], 3x3 window, padding 1, stride 1 (geon's
  // conv2d: the cross-correlation of PyTorch's Conv2d, https://pytorch.org/docs/stable/generated/torch.nn.Conv2d.html,
  // out[n, k, p, q] = Σ_c,r,s x[n, c, p·stride + r - pad, q·stride + s - pad] · f[k, c, r, s], zero outside x)
  const d = new Map<string, AxisDecl>([
    ["N", { name: "N", length: 1 }],
    ["C", { name: "C", length: 2, roles: ["Channel"] }],
    ["H", { name: "H", length: 3, roles: ["Height"] }],
    ["W", { name: "W", length: 3, roles: ["Width"] }],
    ["K", { name: "K", length: 1, roles: ["Channelout"] }],
    ["R", { name: "R", length: 3, roles: ["Height"] }],
    ["S", { name: "S", length: 3, roles: ["Width"] }],
    ["P", { name: "P", length: 3, roles: ["Height"] }],
    ["Q", { name: "Q", length: 3, roles: ["Width"] }],
  ]);
  const inf = inferAxes(
    CATALOGUE,
    "op:conv2d",
    { x: [["N", "C", "H", "W"]], filter: [["K", "C-1", "R", "S"]] },
    { out_axes: ["K", "P", "Q", "N"], padding: 1 },
    d,
  );
  if (inf.kind !== "ok") throw new Error(JSON.stringify(inf));
  const conv = loopsOf("op:conv2d", inf, ["x", "f"], "z", (ref) => refLength(ref, d) ?? 1);

  it("loops over the output, then the channel and the window", () => {
    expect(conv.axes.map((a) => `${a.name}${a.reduced ? "*" : ""}=${a.length}`)).toEqual([
      "K=1",
      "P=3",
      "Q=3",
      "N=1",
      "C*=2",
      "R*=3",
      "S*=3",
    ]);
  });

  it("reads x through the window, 0 in the padding, and writes what the definition gives", () => {
    const all = steps(conv);
    expect(all).toHaveLength(9 * 2 * 9);
    // the first step reads x at (n, c, p + r - 1, q + s - 1) = (0, 0, -1, -1): padding, so 0
    expect(all[0]!.reads[0]).toEqual([0, 0, -1, -1]);
    expect(all[0]!.values[0]).toBe(0);
    const x = (n: number, c: number, h: number, w: number) =>
      h < 0 || h >= 3 || w < 0 || w >= 3 ? 0 : sampleValue(0, ((n * 2 + c) * 3 + h) * 3 + w);
    const f = (k: number, c: number, r: number, s: number) =>
      sampleValue(1, ((k * 2 + c) * 3 + r) * 3 + s);
    const expected = new Map<string, number>();
    for (let p = 0; p < 3; p++)
      for (let q = 0; q < 3; q++) {
        let sum = 0;
        for (let c = 0; c < 2; c++)
          for (let r = 0; r < 3; r++)
            for (let s = 0; s < 3; s++) sum += x(0, c, p + r - 1, q + s - 1) * f(0, c, r, s);
        expected.set(`0,${p},${q},0`, sum);
      }
    expect(written(all)).toEqual(expected);
  });

  it("writes the window in the formula, the loops and the builder call, and no einsum", async () => {
    const { builder, einsum, explanation, formula, pythonLoops } = await import("./notation");
    expect(formula(conv)).toBe(
      "z[K, P, Q, N] = Σ_C,R,S x[N, C, P + R - 1, Q + S - 1] · f[K, C-1, R, S]",
    );
    expect(explanation(conv)).toContain(
      "C of x pairs with C-1 of f: conv2d multiplies along them and sums over C.",
    );
    expect(explanation(conv)).toContain(
      "R slides a window along H of x: at P it reads H = P + R - 1; where that falls outside H (the padding) it reads 0.",
    );
    const lines = pythonLoops(
      conv,
      conv.axes.map((a) => a.name),
    );
    expect(lines[0]).toBe("# x read as 0 outside its range (zero padding)");
    expect(lines.at(-1)!.trim()).toBe(
      "z[k, p, q, n] += x[n, c, p + r - 1, q + s - 1] * f[k, c, r, s]",
    );
    expect(einsum(conv)).toBeNull();
    expect(builder(conv)).toBe(
      'z = gc.conv2d(x, f, out_axes=[K, P, Q, N], stride=1, padding=1, name="z")',
    );
  });
});

describe("the notation beside the stepper", async () => {
  const { builder, einsum, explanation, formula, pythonLoops } = await import("./notation");
  const d = declared({ H: 2, W: 3, N: 2 });
  const inf = inferAxes(CATALOGUE, "op:dot", { x: [["H", "W-1"]], y: [["W", "N"]] }, {}, d);
  if (inf.kind !== "ok") throw new Error("no inference");
  const dot = loopsOf("op:dot", inf, ["x", "y"], "z", (ref) => refLength(ref, d) ?? 1);

  it("writes the formula with the pairing spelled out", () => {
    expect(formula(dot)).toBe("z[H, N] = Σ_W x[H, W-1] · y[W, N]");
    expect(explanation(dot)[0]).toBe(
      "W-1 of x pairs with W of y: dot multiplies along them and sums over W.",
    );
  });

  it("writes loops in the chosen order, einsum and builder code", () => {
    expect(pythonLoops(dot, ["W", "H", "N"])).toEqual([
      "for w in range(3):",
      "    for h in range(2):",
      "        for n in range(2):",
      "            z[h, n] += x[h, w] * y[w, n]",
    ]);
    expect(einsum(dot)).toBe('np.einsum("hw,wn->hn", x, y)');
    expect(builder(dot)).toBe('z = gc.dot(x, y, name="z")');
  });
});

describe("the stepper speaks NumPy (issue 36)", async () => {
  const { einsum } = await import("./notation");
  const { partialSums } = await import("./stepper");

  it("names einsum's letters after the axes, a taken letter giving way to a free one", () => {
    expect(
      einsum(loops("op:dot", { x: [["H", "W-1"]], y: [["W", "N"]] }, { H: 2, W: 3, N: 2 })),
    ).toBe('np.einsum("hw,wn->hn", t0, t1)');
    const same = einsum(
      loops("op:dot", { x: [["H", "H2-1"]], y: [["H2", "N"]] }, { H: 2, H2: 3, N: 2 }),
    );
    expect(same).toMatch(/^np\.einsum\("h(.),\1n->hn", t0, t1\)$/);
    expect(same).not.toContain('"hh');
  });

  it("draws every partial sum as it accumulates when the reduced axis loops outside", () => {
    const dot = loops("op:dot", { x: [["H", "W-1"]], y: [["W", "N"]] }, { H: 2, W: 3, N: 2 });
    const all = steps(dot, ["W", "H", "N"]);
    // after the first pass over W=0 every cell of z holds a partial sum, none complete
    const first = partialSums(all, 3);
    expect([...first.values()].map((c) => c.complete)).toEqual([false, false, false, false]);
    // at the end each is complete and equals the product's cell
    const last = partialSums(all, all.length - 1);
    expect([...last.values()].every((c) => c.complete)).toBe(true);
    expect(new Map([...last].map(([k, c]) => [k, c.value]))).toEqual(written(steps(dot)));
    // in the usual order a cell is complete before the next starts
    expect([...partialSums(steps(dot), 3).values()].map((c) => c.complete)).toEqual([true, false]);
  });
});
