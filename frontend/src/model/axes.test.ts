import { describe, expect, it } from "vitest";
import cases from "../../../tests/core/axis_cases.json";
import { canonical, deriveSignature, inferAxes, MIRRORED, parseRef, pyRepr, type AxisDecl } from "./axes";
import { CATALOGUE, searchKernels } from "./catalogue";

interface Case {
  name: string;
  axes: Record<string, Omit<AxisDecl, "name">>;
  kernel: string;
  inputs: Record<string, string[][]>;
  params?: unknown;
  expect: { result?: string[]; signature?: unknown; error?: { type: string; message: string } };
}

const all = (cases as unknown as { cases: Case[] }).cases;
const declared = (c: Case) => new Map(Object.entries(c.axes).map(([name, body]) => [name, { name, ...body }]));
const mirrored = all.filter((c) => MIRRORED.has(c.kernel) || !CATALOGUE.has(c.kernel));
const serverOnly = all.filter((c) => !mirrored.includes(c));
const SIGNED = 6;

describe("inferAxes mirrors the server on the shared cases", () => {
  it("covers most of the table", () => {
    expect([mirrored.length, serverOnly.length]).toEqual([49, 41]);
    expect(mirrored.filter((c) => c.expect.signature).length).toBe(SIGNED);
  });

  it.each(mirrored.map((c) => [c.name, c] as const))("%s", (_name, c) => {
    const got = inferAxes(CATALOGUE, c.kernel, c.inputs, c.params, declared(c));
    if (c.expect.error) {
      expect(got).toEqual({ kind: "error", type: c.expect.error.type, message: c.expect.error.message });
    } else {
      expect(got.kind === "ok" && got.result).toEqual(c.expect.result);
      if (c.expect.signature && got.kind === "ok") expect(deriveSignature(got, declared(c))).toEqual(c.expect.signature);
    }
  });

  it.each(serverOnly.map((c) => [c.name, c] as const))("%s is left to the server", (_name, c) => {
    expect(inferAxes(CATALOGUE, c.kernel, c.inputs, c.params, declared(c))).toEqual({ kind: "server" });
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
