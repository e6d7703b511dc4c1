import { describe, expect, it } from "vitest";
import {
  idleShares,
  scheduleLayout,
  scheduleSummary,
  seconds,
  type PipelineCost,
} from "./schedule";
import { bytes } from "./suggestions";

// GPipe, 2 devices, 2 microbatches, forward 1 and backward 2 seconds a stage, no sends: the
// boxes geon/core/plans/cost/schedules.py's simulate places
const gpipe: PipelineCost = {
  schedule: "gpipe",
  stages: 2,
  devices: 2,
  microbatches: 2,
  bubble: 1 / 3,
  stageSeconds: [3, 3],
  seconds: 9,
  grid: [
    { device: 0, stage: 0, kind: "F", microbatch: 0, start: 0, end: 1 },
    { device: 0, stage: 0, kind: "F", microbatch: 1, start: 1, end: 2 },
    { device: 1, stage: 1, kind: "F", microbatch: 0, start: 1, end: 2 },
    { device: 1, stage: 1, kind: "F", microbatch: 1, start: 2, end: 3 },
    { device: 1, stage: 1, kind: "B", microbatch: 0, start: 3, end: 5 },
    { device: 1, stage: 1, kind: "B", microbatch: 1, start: 5, end: 7 },
    { device: 0, stage: 0, kind: "B", microbatch: 0, start: 5, end: 7 },
    { device: 0, stage: 0, kind: "B", microbatch: 1, start: 7, end: 9 },
  ],
};

describe("schedule chart", () => {
  it("places a box per action on its device's row, time to the right", () => {
    const layout = scheduleLayout(gpipe, 400);
    expect(layout.devices).toBe(2);
    expect(layout.boxes).toHaveLength(8);
    // the plot runs from 64 px to 392 px: device 0's B1 ends at the right edge
    const last = layout.boxes.at(-1)!;
    expect(last.x + last.width).toBeCloseTo(392);
    expect(last.y).toBe(6);
    expect(layout.boxes[2]!.y).toBe(32);
  });

  it("leaves the bubble idle: each device busy 6 of 9 seconds", () => {
    // GPipe's (p-1)/(m+p-1) = 1/3 on each device
    for (const idle of idleShares(gpipe, 400)) expect(idle).toBeCloseTo(1 / 3);
  });

  it("says the schedule, the bubble and the step", () => {
    expect(scheduleSummary(gpipe)).toBe(
      "gpipe: 2 stages, 2 microbatches, bubble 33.3% of a 9.00 s step",
    );
    expect(seconds(2.5e-5)).toBe("25.0 µs");
    expect(bytes(4872)).toBe("4.9 kB");
    expect(bytes(12)).toBe("12 B");
  });
});
