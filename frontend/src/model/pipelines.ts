// A shard plan's pipeline stages as the server stores them (issue 33, DESIGN.md §12:
// ShardPlan.pipeline, null when the plan has none) and the one line the plan card shows for
// them: "1F1B · 4 stages · 8 microbatches · bubble 27%".
//
// The bubble on the card is the schedule's own, the idle fraction of a step whose stages take
// equal time: (p - 1) / (v·m + p - 1) for p devices on the pipeline axis, v stages per device and
// m microbatches (GPipe and 1F1B: Huang et al. 2019, Narayanan et al. 2021 §2.2; the interleaved
// schedule divides the ramp by v). The plan's cost (geon/core/plans/cost/pipelined.py) simulates
// its real stage times and sends; its "pipeline.bubble" replaces this figure when the caller has it.
//
// The cost's "pipeline" section (PlanCost.pipeline) in the shape geon cost prints it: "stages" is
// their count, "bubble" the idle fraction of the costed step (ui/schedule.ts draws its grid).

/** A plan's mesh as far as its pipeline reads it (model/plans.ts's Mesh). */
type Mesh = { axes: Record<string, number> };

export type Schedule = "gpipe" | "1f1b" | "interleaved";

/** ``{"axis", "microbatches", "schedule", "virtualStages"?, "stages"}``: stage k runs the
 * operations whose Group scope starts with one of ``stages[k]``, or the cost model cuts them
 * ("balanced"). */
export interface PlanPipeline {
  axis: string;
  microbatches: number;
  schedule: Schedule;
  virtualStages?: number;
  stages: string[][] | "balanced";
}

/** The ``pipeline`` of a pipelined plan's cost (the grid's boxes: ui/schedule.ts). */
export interface PipelineCostSummary {
  schedule: Schedule;
  stages: number;
  microbatches: number;
  bubble: number;
  stageSeconds: number[];
  grid: unknown[];
}

const NAMES: Record<Schedule, string> = {
  gpipe: "GPipe",
  "1f1b": "1F1B",
  interleaved: "Interleaved 1F1B",
};

/** The stages' count (p·v) and the devices on the pipeline axis (p) of ``pipeline`` on ``mesh``. */
export function stageCount(
  pipeline: PlanPipeline,
  mesh: Mesh,
): { stages: number; devices: number } {
  const devices = mesh.axes[pipeline.axis] ?? 1;
  const perDevice = pipeline.virtualStages ?? (pipeline.schedule === "interleaved" ? 2 : 1);
  return {
    stages: pipeline.stages === "balanced" ? devices * perDevice : pipeline.stages.length,
    devices,
  };
}

/** The idle fraction of a step of equal stages (see the module comment). */
export function idealBubble(pipeline: PlanPipeline, mesh: Mesh): number {
  const { stages, devices } = stageCount(pipeline, mesh);
  const perDevice = Math.max(1, stages / Math.max(1, devices));
  return (devices - 1) / (perDevice * pipeline.microbatches + devices - 1);
}

/** The card's line: "1F1B · 4 stages · 8 microbatches · bubble 27%" ("balanced" stages say so;
 * ``bubble``: the plan's costed bubble, else the schedule's with equal stages). */
export function describePipeline(pipeline: PlanPipeline, mesh: Mesh, bubble?: number): string {
  const { stages, devices } = stageCount(pipeline, mesh);
  const name = NAMES[pipeline.schedule] ?? pipeline.schedule;
  const balanced = pipeline.stages === "balanced" ? " balanced" : "";
  const perDevice = stages > devices ? ` (${stages / devices} per device)` : "";
  const m = pipeline.microbatches;
  const idle = Math.round(100 * (bubble ?? idealBubble(pipeline, mesh)));
  return `${name} · ${stages}${balanced} stage${stages === 1 ? "" : "s"}${perDevice} · ${m} microbatch${m === 1 ? "" : "es"} · bubble ${idle}%`;
}
