import { describe, expect, it } from "vitest";
import table from "../../../../tests/core/plans/partial_cases.json";
import type { AxisDecl } from "../axes";
import { CATALOGUE } from "../catalogue";
import { inferAxes } from "./dispatch";
import { deriveSignature } from "./inference";

// The server's answers (geon.core.ops.run_case) for partial operations; tests/core/plans/test_partial_cases.py
// fails when they drift from the server.
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

const cases = (table as unknown as { cases: Case[] }).cases;

describe("partial operations mirror the server", () => {
  it.each(cases.map((c) => [c.name, c] as const))("%s", (_name, c) => {
    const declared = new Map(
      Object.entries(c.axes).map(([name, body]) => [name, { name, ...body }]),
    );
    const got = inferAxes(CATALOGUE, c.kernel, c.inputs, c.params, declared);
    if (c.expect.error) {
      expect(got).toEqual({
        kind: "error",
        type: c.expect.error.type,
        message: c.expect.error.message,
      });
    } else {
      expect(got.kind === "ok" && [got.result, got.index]).toEqual([
        c.expect.result,
        c.expect.index,
      ]);
      if (got.kind === "ok") expect(deriveSignature(got, declared)).toEqual(c.expect.signature);
    }
  });
});
