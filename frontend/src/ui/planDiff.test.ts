import { describe, expect, it } from "vitest";
import { describePipeline } from "../model/pipelines";
import {
  collectiveLine,
  peaks,
  pipelineLine,
  pipelineLines,
  placedLine,
  signed,
  type PipelineSide,
  type PlanDiff,
} from "./planDiff";

const reduce = {
  kind: "all-reduce",
  meshAxes: ["tp"],
  bytes: 512,
  seconds: 0.000002,
  tensorLabel: "attn out partial",
  producerLabel: "op:dot",
  consumerLabel: "op:sum",
};

describe("plan diff in words", () => {
  it("says a collective by name, with bytes and time", () => {
    expect(collectiveLine(reduce)).toMatch(
      /^all-reduce over tp · attn out partial: op:dot → op:sum · 512 B, /,
    );
  });

  it("signs a change", () => {
    expect(signed(0, String)).toBe("no change");
    expect(signed(-3, String)).toBe("−3");
    expect(signed(2, String)).toBe("+2");
  });

  it("finds the busiest device on each side", () => {
    const diff = {
      devices: [
        { before: { peakBytes: 10, seconds: 0 }, after: null },
        { before: { peakBytes: 4, seconds: 0 }, after: { peakBytes: 30, seconds: 0 } },
      ],
    } as unknown as PlanDiff;
    expect(peaks(diff)).toEqual({ before: 10, after: 30 });
  });
});

describe("placedLine", () => {
  it("names the first few and counts the rest", () => {
    expect(placedLine([])).toBe("none");
    expect(placedLine(["a", "b"])).toBe("a; b");
    expect(placedLine(["a", "b", "c", "d", "e", "f"])).toBe("a; b; c; d; and 2 more");
  });
});

// 1F1B over 4 devices on pp, 8 microbatches: the cost's bubble 0.2734 (a side of the server's
// plan diff, geon/core/plans/diff.py), shown as the plan card shows the plan's pipeline.
const oneF: PipelineSide = {
  axis: "pp",
  schedule: "1f1b",
  stages: 4,
  devices: 4,
  virtualStages: 1,
  microbatches: 8,
  bubble: 0.2734,
  balanced: false,
};

describe("a pipelined side of the diff", () => {
  it("says its schedule line as the plan card does, with the costed bubble", () => {
    expect(pipelineLine(oneF)).toBe("1F1B · 4 stages · 8 microbatches · bubble 27%");
    const card = describePipeline(
      { axis: "pp", microbatches: 8, schedule: "1f1b", stages: [["a"], ["b"], ["c"], ["d"]] },
      { axes: { pp: 4, dp: 2 } },
      0.2734,
    );
    expect(pipelineLine(oneF)).toBe(card);
  });

  it("says balanced and interleaved stages as the card does", () => {
    expect(pipelineLine({ ...oneF, balanced: true, bubble: 0.1 })).toBe(
      "1F1B · 4 balanced stages · 8 microbatches · bubble 10%",
    );
    const interleaved = {
      ...oneF,
      schedule: "interleaved" as const,
      stages: 8,
      virtualStages: 2,
      bubble: 0.16,
    };
    expect(pipelineLine(interleaved)).toBe(
      "Interleaved 1F1B · 8 stages (2 per device) · 8 microbatches · bubble 16%",
    );
  });

  it("names each plan's line, and a plan without stages says so", () => {
    const diff = {
      base: { name: "data parallel" },
      target: { name: "1F1B over pp" },
      pipeline: { a: null, b: oneF, changed: ["schedule"], bubbleDelta: 0.2734 },
    } as unknown as PlanDiff;
    expect(pipelineLines(diff)).toEqual([
      "data parallel: no pipeline stages",
      "1F1B over pp: 1F1B · 4 stages · 8 microbatches · bubble 27%",
    ]);
  });

  it("adds no line where neither plan has stages", () => {
    expect(
      pipelineLines({ base: { name: "a" }, target: { name: "b" } } as unknown as PlanDiff),
    ).toEqual([]);
  });
});
