import { describe, expect, it } from "vitest";
import cases from "../../../tests/core/ipf_cases.json";
import { IPF, selectionOf, ZRange } from "./ipf";

type R = { start: number[]; end: number[] };
interface Case {
  kind: "ipf" | "ipf_error" | "clip" | "split";
  name: string;
  projection?: number[][];
  offset?: number[];
  shape?: number[];
  point?: number[];
  range?: R;
  bounds?: R;
  dim?: number;
  chunk?: number;
  parts?: number;
  sizes?: number[];
  expect?: R | R[];
  error?: string;
}

const all = (cases as unknown as { cases: Case[] }).cases;
const of = (kind: Case["kind"]) =>
  all.filter((c) => c.kind === kind).map((c) => [c.name, c] as const);
const json = (r: ZRange) => r.toJson();

describe("the IPF mirror computes what geon.core.zspace computes (tests/core/ipf_cases.json)", () => {
  it("reads every case", () => {
    expect([
      of("ipf").length,
      of("ipf_error").length,
      of("clip").length,
      of("split").length,
    ]).toEqual([75, 4, 5, 28]);
  });

  it.each(of("ipf"))("%s", (_name, c) => {
    const f = new IPF(c.projection!, c.offset, c.shape);
    const got = c.point ? f.apply(c.point) : f.apply(ZRange.fromJson(c.range!));
    expect(json(got)).toEqual(c.expect);
  });

  it.each(of("ipf_error"))("refuses: %s", (_name, c) => {
    expect(() => new IPF(c.projection!, c.offset, c.shape)).toThrow(c.error!);
  });

  it.each(of("clip"))("%s", (_name, c) => {
    expect(json(ZRange.fromJson(c.range!).clip(ZRange.fromJson(c.bounds!)))).toEqual(c.expect);
  });

  it.each(of("split"))("%s", (_name, c) => {
    const r = ZRange.fromJson(c.range!);
    const run = () => r.split(c.dim!, { chunk: c.chunk, parts: c.parts, sizes: c.sizes });
    if (c.error) expect(run).toThrow(c.error);
    else expect(run().map(json)).toEqual(c.expect);
  });
});

describe("ZRange", () => {
  it("has value semantics, a shape, a size and the server's text form", () => {
    const r = new ZRange([0, 0], [2, 3]);
    expect([r.shape, r.size, r.isEmpty, `${r}`]).toEqual([[2, 3], 6, false, "[0:2, 0:3]"]);
    expect(r.equals(new ZRange([0, 0], [2, 3]))).toBe(true);
    expect(r.contains(new ZRange([1, 0], [2, 2]))).toBe(true);
    expect(r.contains([2, 0])).toBe(false);
    expect(r.intersection(new ZRange([2, 0], [3, 3]))).toBeNull();
  });

  it("refuses a start after its end, naming both", () => {
    expect(() => new ZRange([1], [0])).toThrow(
      'range has start "[1]" after end "[0]" in dim 0; expected start <= end',
    );
    expect(() => new ZRange([0.5], [1])).toThrow('range start has entry "0.5"; expected integers');
  });
});

describe("selectionOf: the one clip rule (DESIGN.md §4, geon.core.zspace.selection_of)", () => {
  const pad = new IPF([[1]], [-1], [1]); // a read one cell before and after its tensor
  const index = new ZRange([0], [5]);
  const tensor = new ZRange([0], [3]);

  it.each([
    ["a read is clipped to its tensor", pad, tensor, true, "[0:3]"],
    ["a write is the projection as it is", pad, tensor, false, "[-1:4]"],
    ["a read without a tensor range is the projection", pad, null, true, "[-1:4]"],
    [
      "a read of a tensor of another rank is the projection",
      pad,
      new ZRange([0, 0], [3, 3]),
      true,
      "[-1:4]",
    ],
    [
      "a read wholly past its tensor is empty at its nearest edge",
      new IPF([[1]], [10], [1]),
      tensor,
      true,
      "[3:3]",
    ],
  ] as const)("%s", (_label, ipf, bounds, read, want) => {
    expect(`${selectionOf(ipf, index, bounds, { read })}`).toBe(want);
  });
});
