import { describe, expect, it } from "vitest";
import { canonical, MAX_AXIS_REF_LENGTH, parseRef } from "./axes";
import { searchKernels } from "./catalogue";
import { pyRepr } from "./infer/messages";

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
    expect(() => parseRef("1W")).toThrow(
      'axis reference "1W" is invalid; expected a name with an optional dual level, e.g. "W", "W-1", "W+1", or a composite "H*W"',
    );
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
    expect(() => parseRef(text)).toThrow(
      `axis reference "${text}" is invalid; expected a name with an optional dual level`,
    );
  });

  it("reads spaces around a name and its level, as the server does", () => {
    expect(parseRef("  W  -  1 * H ")).toEqual([
      { name: "W", level: -1 },
      { name: "H", level: 0 },
    ]);
  });

  it("refuses a dual level outside int64, as the server does", () => {
    expect(parseRef("W-9223372036854775808")).toEqual([{ name: "W", level: -9223372036854775808 }]);
    expect(() => parseRef("W+9223372036854775808")).toThrow(
      'dual level "9223372036854775808" for axis "W" is out of range; expected an integer from -9223372036854775808 to 9223372036854775807',
    );
    expect(() => parseRef("W+" + "9".repeat(30))).toThrow(
      'dual level "9999999999999... (30 digits)" for axis "W"',
    );
  });

  it("quotes values as the server's messages do", () => {
    expect([pyRepr([1]), pyRepr("H"), pyRepr({ begin: 0 }), pyRepr(null)]).toEqual([
      "[1]",
      "'H'",
      "{'begin': 0}",
      "None",
    ]);
  });
});

describe("searchKernels", () => {
  it.each([
    ["dot", ["op:dot", "op:dot_partial"]],
    ["reduction", ["op:sum", "op:prod", "op:max", "op:min", "op:mean"]],
    ["binary elementwise", ["op:subtract", "op:divide", "op:power"]],
  ])("%s", (query, want) => {
    expect(searchKernels(query).map((k) => k.name)).toEqual(want);
  });

  it("ranks the kernel a query names exactly first (issue 36): max before maximum", () => {
    expect(
      searchKernels("max")
        .slice(0, 2)
        .map((k) => k.name),
    ).toEqual(["op:max", "op:maximum"]);
    expect(searchKernels("op:min")[0]!.name).toBe("op:min");
    expect(searchKernels("sum")[0]!.name).toBe("op:sum");
  });

  it("lists a puzzle's allowed kernels first, after an exact name", () => {
    const allowed = ["op:sum", "op:multiply"];
    expect(
      searchKernels("", allowed)
        .slice(0, 2)
        .map((k) => k.name),
    ).toEqual(["op:multiply", "op:sum"]);
    expect(searchKernels("", allowed).length).toBe(searchKernels("").length);
    expect(searchKernels("dot", allowed).map((k) => k.name)).toEqual(["op:dot", "op:dot_partial"]);
  });
});
