import { describe, expect, it } from "vitest";
import { describePipeline, idealBubble, stageCount, type PlanPipeline } from "./pipelines";
import { describePlan, type Plan } from "./plans";

const mesh = (axes: Record<string, number>) => ({ name: "pod", axes });
const layers = (n: number): string[][] => Array.from({ length: n }, (_, i) => [`layers.${i}`]);

describe("a plan's pipeline on its card", () => {
  it("says the schedule, the stages, the microbatches and the bubble (the issue's example)", () => {
    // given 4 stages on pp=4 under 1F1B with 8 microbatches
    const pipeline: PlanPipeline = {
      axis: "pp",
      microbatches: 8,
      schedule: "1f1b",
      stages: layers(4),
    };
    // then the card's line is the issue's: (p-1)/(m+p-1) = 3/11 idle
    expect(describePipeline(pipeline, mesh({ pp: 4, dp: 2 }))).toBe(
      "1F1B · 4 stages · 8 microbatches · bubble 27%",
    );
  });

  it("counts balanced stages from the mesh, and the interleaved schedule's per device", () => {
    const balanced: PlanPipeline = {
      axis: "pp",
      microbatches: 1,
      schedule: "gpipe",
      stages: "balanced",
    };
    expect(stageCount(balanced, mesh({ pp: 2 }))).toEqual({ stages: 2, devices: 2 });
    // GPipe, p = 2, m = 1: half the step idle (Huang et al. 2019: (p-1)/(m+p-1))
    expect(describePipeline(balanced, mesh({ pp: 2 }))).toBe(
      "GPipe · 2 balanced stages · 1 microbatch · bubble 50%",
    );
    // interleaved, p = 2, v = 2, m = 4: the ramp divided by v (Narayanan et al. 2021: (p-1)/(v·m) of the busy time)
    const interleaved: PlanPipeline = {
      axis: "pp",
      microbatches: 4,
      schedule: "interleaved",
      virtualStages: 2,
      stages: "balanced",
    };
    expect(idealBubble(interleaved, mesh({ pp: 2 }))).toBeCloseTo(1 / 9);
    const busy = 1 - idealBubble(interleaved, mesh({ pp: 2 }));
    expect((1 - busy) / busy).toBeCloseTo((2 - 1) / (2 * 4));
    expect(describePipeline(interleaved, mesh({ pp: 2 }))).toBe(
      "Interleaved 1F1B · 4 balanced stages (2 per device) · 4 microbatches · bubble 11%",
    );
  });

  it("shows the costed bubble when the caller has the plan's cost", () => {
    const pipeline: PlanPipeline = {
      axis: "pp",
      microbatches: 8,
      schedule: "1f1b",
      stages: layers(4),
    };
    expect(describePipeline(pipeline, mesh({ pp: 4 }), 0.3141)).toBe(
      "1F1B · 4 stages · 8 microbatches · bubble 31%",
    );
  });

  it("is part of the plan's one-line description, and absent without a pipeline", () => {
    const plan: Plan = {
      id: 1,
      name: "3-D",
      mesh: mesh({ pp: 2, dp: 2 }),
      spec: {},
      axisMapping: { N: "dp" },
    };
    expect(describePlan(plan)).toBe("4 devices · maps N→dp");
    expect(describePlan({ ...plan, pipeline: null })).toBe("4 devices · maps N→dp");
    const piped = {
      ...plan,
      pipeline: {
        axis: "pp",
        microbatches: 4,
        schedule: "gpipe",
        stages: layers(2),
      } as PlanPipeline,
    };
    expect(describePlan(piped)).toBe(
      "4 devices · maps N→dp · GPipe · 2 stages · 4 microbatches · bubble 20%",
    );
  });
});
