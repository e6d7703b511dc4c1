import { describe, expect, it } from "vitest";
import { mapDims, parseGrid } from "./shards";

describe("shards panel helpers", () => {
  it("parses a grid and names a bad part or axis", () => {
    expect(parseGrid("H=2, N=3", ["H", "N"])).toEqual({ H: 2, N: 3 });
    expect(() => parseGrid("H:2", ["H", "N"])).toThrow(
      'grid part "H:2" is not AXIS=PARTS; expected e.g. "H=2"',
    );
    expect(() => parseGrid("W=2", ["H", "N"])).toThrow(
      'grid axis "W" is not an index axis of the operation; expected one of H, N',
    );
    expect(() => parseGrid(" ", ["H"])).toThrow('the grid is empty; expected e.g. "H=2"');
  });
  it("shows the dims the boxes cut first", () => {
    const range = { start: [0, 0, 0, 0], end: [2, 8, 8, 2] };
    expect(
      mapDims(range, [
        { start: [0, 0, 0, 0], end: [2, 5, 8, 2] },
        { start: [0, 3, 0, 0], end: [2, 8, 8, 2] },
      ]),
    ).toEqual([0, 1]);
    expect(mapDims(range, [{ start: [0, 0, 0, 0], end: [2, 8, 4, 2] }])).toEqual([0, 2]);
    expect(mapDims({ start: [0], end: [4] }, [])).toEqual([0]);
  });
});
