import { describe, expect, it } from "vitest";
import cases from "../../../../tests/core/axis_cases.json";
import type { AxisDecl } from "../axes";
import { CATALOGUE } from "../catalogue";
import { inferAxes, MIRRORED } from "./dispatch";
import { deriveSelections, deriveSignature } from "./inference";

interface Case {
  name: string;
  axes: Record<string, Omit<AxisDecl, "name">>;
  kernel: string;
  inputs: Record<string, string[][]>;
  params?: unknown;
  expect: {
    result?: string[];
    index?: string[];
    signature?: unknown;
    error?: { type: string; message: string };
  };
}

const all = (cases as unknown as { cases: Case[] }).cases;
const declared = (c: Case) =>
  new Map(Object.entries(c.axes).map(([name, body]) => [name, { name, ...body }]));
const mirrored = all.filter((c) => MIRRORED.has(c.kernel) || !CATALOGUE.has(c.kernel));
const serverOnly = all.filter((c) => !mirrored.includes(c));
const SIGNED = 37;

describe("inferAxes mirrors the server on the shared cases", () => {
  it("covers the whole table", () => {
    expect([mirrored.length, serverOnly.length]).toEqual([220, 0]);
    expect(mirrored.filter((c) => c.expect.signature).length).toBe(SIGNED);
  });

  it.each(mirrored.map((c) => [c.name, c] as const))("%s", (_name, c) => {
    const got = inferAxes(CATALOGUE, c.kernel, c.inputs, c.params, declared(c));
    if (c.expect.error) {
      expect(got).toEqual({
        kind: "error",
        type: c.expect.error.type,
        message: c.expect.error.message,
      });
    } else {
      expect(got.kind === "ok" && [got.result, got.index]).toEqual([
        c.expect.result,
        c.expect.index ?? c.expect.result,
      ]);
      if (c.expect.signature && got.kind === "ok")
        expect(deriveSignature(got, declared(c))).toEqual(c.expect.signature);
    }
  });

  it.each(serverOnly.map((c) => [c.name, c] as const))("%s is left to the server", (_name, c) => {
    expect(inferAxes(CATALOGUE, c.kernel, c.inputs, c.params, declared(c))).toEqual({
      kind: "server",
    });
  });
});

describe("what the table cannot pin", () => {
  const decl = new Map([
    ["H", { name: "H", length: 2 }],
    ["W", { name: "W", length: 3 }],
    ["N", { name: "N", length: 4 }],
  ]);

  it("a composite group still gets the server's errors first", () => {
    expect(
      inferAxes(CATALOGUE, "op:flatten", { tensor: [["H", "W*N"]] }, { axes: ["W*N", "H"] }, decl),
    ).toEqual({
      kind: "error",
      type: "AxisError",
      message:
        'flatten axes ("W*N", "H") are not adjacent in this order in (H, W*N); dimshuffle them next to each other first',
    });
  });

  it("a slice reads only its window; a pad its whole input; offsets count from the tensor's start", () => {
    const s = new Map([...decl, ["N2", { name: "N2", length: 2 }]]);
    const got = inferAxes(
      CATALOGUE,
      "op:slice",
      { tensor: [["H", "N"]] },
      { slices: { N: { start: 1, stop: 3 } }, axes: { N: "N2" } },
      s,
    );
    if (got.kind !== "ok") throw new Error(got.kind);
    const sig = deriveSignature(got, s, [
      [10, 20],
      [0, 0],
    ]);
    expect(sig.inputs.tensor![0]!.affineMap.offset).toEqual([10, 21]);
    const ranges = [
      { start: [10, 20], end: [12, 24] },
      { start: [0, 0], end: [2, 2] },
    ];
    expect(deriveSelections(sig, [2, 2], ranges)).toEqual([
      { start: [10, 21], end: [12, 23] },
      { start: [0, 0], end: [2, 2] },
    ]);
  });

  it("an axis of length 0, which the checker refuses, has no projection: its operand keeps its tensor's range", () => {
    const empty = new Map([...decl, ["Z", { name: "Z", length: 0 }]]);
    const got = inferAxes(
      CATALOGUE,
      "op:sum",
      { tensor: [["Z", "W"]] },
      { reduction_axes: ["Z"] },
      empty,
    );
    if (got.kind !== "ok") throw new Error(got.kind);
    const ranges = [
      { start: [2, 2], end: [2, 5] },
      { start: [0], end: [3] },
    ];
    expect(deriveSelections(deriveSignature(got, empty), [3], ranges)).toEqual(ranges);
  });
});
