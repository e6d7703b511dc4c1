import { describe, expect, it } from "vitest";
import cases from "../../../tests/core/axis_cases.json";
import { canonical, MAX_AXIS_REF_LENGTH, parseRef, type AxisDecl } from "./axes";
import { inferAxes, MIRRORED } from "./infer/infer";
import { pyRepr } from "./infer/messages";
import { deriveSelections, deriveSignature } from "./infer/signature";
import { CATALOGUE, searchKernels } from "./catalogue";

interface Case {
  name: string;
  axes: Record<string, Omit<AxisDecl, "name">>;
  kernel: string;
  inputs: Record<string, string[][]>;
  params?: unknown;
  expect: { result?: string[]; index?: string[]; signature?: unknown; error?: { type: string; message: string } };
}

const all = (cases as unknown as { cases: Case[] }).cases;
const declared = (c: Case) => new Map(Object.entries(c.axes).map(([name, body]) => [name, { name, ...body }]));
const mirrored = all.filter((c) => MIRRORED.has(c.kernel) || !CATALOGUE.has(c.kernel));
const serverOnly = all.filter((c) => !mirrored.includes(c));
const SIGNED = 24;

describe("inferAxes mirrors the server on the shared cases", () => {
  it("covers the whole table", () => {
    expect([mirrored.length, serverOnly.length]).toEqual([128, 0]);
    expect(mirrored.filter((c) => c.expect.signature).length).toBe(SIGNED);
  });

  it.each(mirrored.map((c) => [c.name, c] as const))("%s", (_name, c) => {
    const got = inferAxes(CATALOGUE, c.kernel, c.inputs, c.params, declared(c));
    if (c.expect.error) {
      expect(got).toEqual({ kind: "error", type: c.expect.error.type, message: c.expect.error.message });
    } else {
      expect(got.kind === "ok" && [got.result, got.index]).toEqual([c.expect.result, c.expect.index ?? c.expect.result]);
      if (c.expect.signature && got.kind === "ok") expect(deriveSignature(got, declared(c))).toEqual(c.expect.signature);
    }
  });

  it.each(serverOnly.map((c) => [c.name, c] as const))("%s is left to the server", (_name, c) => {
    expect(inferAxes(CATALOGUE, c.kernel, c.inputs, c.params, declared(c))).toEqual({ kind: "server" });
  });
});

describe("what the table cannot pin", () => {
  const decl = new Map([["H", { name: "H", length: 2 }], ["W", { name: "W", length: 3 }], ["N", { name: "N", length: 4 }]]);

  it("a composite group still gets the server's errors first", () => {
    expect(inferAxes(CATALOGUE, "op:flatten", { tensor: [["H", "W*N"]] }, { axes: ["W*N", "H"] }, decl)).toEqual({
      kind: "error",
      type: "AxisError",
      message: 'flatten axes ("W*N", "H") are not adjacent in this order in (H, W*N); dimshuffle them next to each other first',
    });
  });

  it("a slice reads only its window; a pad its whole input; offsets count from the tensor's start", () => {
    const s = new Map([...decl, ["N2", { name: "N2", length: 2 }]]);
    const got = inferAxes(CATALOGUE, "op:slice", { tensor: [["H", "N"]] }, { slices: { N: { start: 1, stop: 3 } }, axes: { N: "N2" } }, s);
    if (got.kind !== "ok") throw new Error(got.kind);
    const sig = deriveSignature(got, s, [[10, 20], [0, 0]]);
    expect(sig.inputs.tensor![0]!.affineMap.offset).toEqual([10, 21]);
    const ranges = [{ start: [10, 20], end: [12, 24] }, { start: [0, 0], end: [2, 2] }];
    expect(deriveSelections(sig, [2, 2], ranges)).toEqual([{ start: [10, 21], end: [12, 23] }, { start: [0, 0], end: [2, 2] }]);
  });
});

describe("references", () => {
  it.each([
    ["W", "W"],
    ["W - 1", "W-1"],
    ["W+2", "W+2"],
    ["H*W-1", "H*W-1"],
  ])("%s reads as %s", (text, want) => {
    expect(canonical(text)).toBe(want);
  });

  it("refuses a bad reference, naming it", () => {
    expect(() => parseRef("1W")).toThrow('axis reference "1W" is invalid; expected a name with an optional dual level, e.g. "W", "W-1", "W+1", or a composite "H*W"');
  });

  it("refuses a reference longer than the schema allows, without scanning it (issue 13)", () => {
    // 40,000 spaces took the old pattern 0.4 s per 20,000; now the length is checked first
    expect(() => parseRef("A" + " ".repeat(40000) + "!")).toThrow(
      `axis reference "A${" ".repeat(39)}... (40002 characters)" is too long; expected at most ${MAX_AXIS_REF_LENGTH} characters`,
    );
  });

  it.each([
    ["the longest reference", "A" + " ".repeat(MAX_AXIS_REF_LENGTH - 2) + "!"],
    ["spaces between the parts of a level", "A " + "- ".repeat(500) + "!"],
  ])("reads %s in one pass and names it when it is invalid", (_label, text) => {
    expect(() => parseRef(text)).toThrow(`axis reference "${text}" is invalid; expected a name with an optional dual level`);
  });

  it("reads spaces around a name and its level, as the server does", () => {
    expect(parseRef("  W  -  1 * H ")).toEqual([{ name: "W", level: -1 }, { name: "H", level: 0 }]);
  });

  it("refuses a dual level outside int64, as the server does", () => {
    expect(parseRef("W-9223372036854775808")).toEqual([{ name: "W", level: -9223372036854775808 }]);
    expect(() => parseRef("W+9223372036854775808")).toThrow(
      'dual level "9223372036854775808" for axis "W" is out of range; expected an integer from -9223372036854775808 to 9223372036854775807',
    );
    expect(() => parseRef("W+" + "9".repeat(30))).toThrow('dual level "9999999999999... (30 digits)" for axis "W"');
  });

  it("quotes values as the server's messages do", () => {
    expect([pyRepr([1]), pyRepr("H"), pyRepr({ begin: 0 }), pyRepr(null)]).toEqual(["[1]", "'H'", "{'begin': 0}", "None"]);
  });
});

describe("searchKernels", () => {
  it.each([
    ["dot", ["op:dot"]],
    ["reduction", ["op:sum", "op:prod", "op:max", "op:min", "op:mean"]],
    ["binary elementwise", ["op:subtract", "op:divide", "op:power"]],
  ])("%s", (query, want) => {
    expect(searchKernels(query).map((k) => k.name)).toEqual(want);
  });
});
