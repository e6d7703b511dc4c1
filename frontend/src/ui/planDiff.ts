// What changes from one plan to another (issue 18, "Diffs": plan against plan), under the Plans
// panel's comparison: the collectives added, removed and changed (by the names people read, with
// bytes and time), the operations placed differently, and the step time and busiest device's
// memory before and after. The figures are the server's (GET .../plans/<a>/diff/<b>).
// A pipelined side (issue 33) shows its schedule line, as the plan card says it
// (model/pipelines.ts describePipeline, with the bubble of the costed step): "1F1B · 4 stages ·
// 8 microbatches · bubble 27%"; its step time then includes the bubble and its sends are among
// the collectives.

import "./planDiff.css";
import { showBytes, showSeconds } from "../model/costs";
import { describePipeline, type PlanPipeline, type Schedule } from "../model/pipelines";
import { el } from "./dom";

export interface DiffCollective {
  kind: string;
  /** The edge's ends by id (the tensor moved, the operation that reads it). */
  tensor?: string;
  consumer?: string;
  meshAxes: string[];
  bytes: number;
  seconds: number;
  tensorLabel: string;
  producerLabel: string;
  consumerLabel: string;
}

interface Side {
  peakBytes: number;
  seconds: number;
}

/** One plan's pipeline stages in the diff (null: none): the cost's schedule, stage count, devices
 * on the pipeline axis, microbatches and bubble, and whether the cost model chose the stages. */
export interface PipelineSide {
  axis: string;
  schedule: Schedule;
  stages: number;
  devices: number;
  virtualStages: number;
  microbatches: number;
  bubble: number;
  balanced: boolean;
}

export interface PlanDiff {
  base: { name: string };
  target: { name: string };
  placements: { operation: string; operationLabel: string }[];
  collectives: {
    added: DiffCollective[];
    removed: DiffCollective[];
    changed: {
      before: DiffCollective;
      after: DiffCollective;
      bytesDelta: number;
      secondsDelta: number;
    }[];
  };
  devices: {
    device: string;
    before: Side | null;
    after: Side | null;
    peakBytesDelta: number;
    secondsDelta: number;
  }[];
  time: {
    before: { lower: number; upper: number };
    after: { lower: number; upper: number };
    delta: { lower: number; upper: number };
  };
  /** Only where either plan has pipeline stages: ``a`` the before's, ``b`` the after's. */
  pipeline?: {
    a: PipelineSide | null;
    b: PipelineSide | null;
    changed: string[];
    bubbleDelta: number;
  } | null;
}

/** A side's schedule line, the plan card's (describePipeline) with the costed bubble:
 * "1F1B · 4 stages · 8 microbatches · bubble 27%"; "no pipeline stages" for none. */
export function pipelineLine(side: PipelineSide | null): string {
  if (!side) return "no pipeline stages";
  const stages: PlanPipeline["stages"] = side.balanced
    ? "balanced"
    : Array.from({ length: side.stages }, (): string[] => []);
  const pipeline: PlanPipeline = {
    axis: side.axis,
    microbatches: side.microbatches,
    schedule: side.schedule,
    virtualStages: side.virtualStages,
    stages,
  };
  return describePipeline(pipeline, { axes: { [side.axis]: side.devices } }, side.bubble);
}

/** The schedule lines of both sides, when either plan has pipeline stages. */
export function pipelineLines(diff: PlanDiff): string[] {
  const p = diff.pipeline;
  if (!p) return [];
  return [`${diff.base.name}: ${pipelineLine(p.a)}`, `${diff.target.name}: ${pipelineLine(p.b)}`];
}

/** One collective as a line: "all-reduce over tp · attn out: op:dot → op:sum · 512 B, 1.2 µs". */
export function collectiveLine(c: DiffCollective): string {
  const over = c.meshAxes.length ? ` over ${c.meshAxes.join(", ")}` : "";
  return `${c.kind}${over} · ${c.tensorLabel}: ${c.producerLabel} → ${c.consumerLabel} · ${showBytes(c.bytes)}, ${showSeconds(c.seconds)}`;
}

/** A signed change: "+1.2 µs", "−512 B", "no change". */
export function signed(delta: number, show: (v: number) => string): string {
  if (delta === 0) return "no change";
  return `${delta > 0 ? "+" : "−"}${show(Math.abs(delta))}`;
}

/** The busiest device's peak memory on each side. */
export function peaks(diff: PlanDiff): { before: number; after: number } {
  const most = (side: "before" | "after") =>
    Math.max(0, ...diff.devices.map((d) => d[side]?.peakBytes ?? 0));
  return { before: most("before"), after: most("after") };
}

/** The operations placed differently, the first few by name: "a; b; c; and 18 more". */
export function placedLine(labels: string[], shown = 4): string {
  if (!labels.length) return "none";
  const rest = labels.length - shown;
  return labels.slice(0, shown).join("; ") + (rest > 0 ? `; and ${rest} more` : "");
}

/** The block shown under the comparison table; ``showEdge``: a collective's row, clicked (or
 * Enter), pans the canvas to its edge and selects both ends (issue 35). */
export function renderPlanDiff(
  diff: PlanDiff,
  showEdge?: (tensor: string, consumer: string) => void,
): HTMLElement {
  const { added, removed, changed } = diff.collectives;
  const list = (cls: string, sign: string, items: [string, DiffCollective][]) =>
    items.map(([text, c]) => {
      const row = el(
        "li",
        { class: `geon-plan-diff-${cls}` },
        el("span", { class: "geon-plan-diff-sign", text: sign }),
        text,
      );
      const { tensor, consumer } = c;
      if (showEdge && tensor && consumer) {
        Object.assign(row, { tabIndex: 0, title: "Show this edge on the canvas" });
        row.classList.add("geon-edge-link");
        row.addEventListener("click", () => showEdge(tensor, consumer));
        row.addEventListener("keydown", (e) => e.key === "Enter" && showEdge(tensor, consumer));
      }
      return row;
    });
  const memory = peaks(diff);
  const steps = [
    ...pipelineLines(diff),
    `step time ${showSeconds(diff.time.before.upper)} → ${showSeconds(diff.time.after.upper)} (${signed(diff.time.delta.upper, showSeconds)}, no overlap${diff.pipeline ? ", bubble included" : ""})`,
    `busiest device ${showBytes(memory.before)} → ${showBytes(memory.after)} (${signed(memory.after - memory.before, showBytes)})`,
    `${diff.placements.length} operation${diff.placements.length === 1 ? "" : "s"} placed differently`,
  ];
  const lines = [
    ...list(
      "added",
      "+",
      added.map((c) => [collectiveLine(c), c]),
    ),
    ...list(
      "removed",
      "−",
      removed.map((c) => [collectiveLine(c), c]),
    ),
    ...list(
      "changed",
      "~",
      changed.map((c) => [
        `${collectiveLine(c.after)} (${signed(c.bytesDelta, showBytes)})`,
        c.after,
      ]),
    ),
  ];
  return el(
    "details",
    { class: "geon-plan-diff", open: "" },
    el("summary", {
      text: `From "${diff.base.name}" to "${diff.target.name}": ${added.length} collective${added.length === 1 ? "" : "s"} added, ${removed.length} removed, ${changed.length} changed`,
    }),
    el("ul", { class: "geon-plan-diff-summary small" }, ...steps.map((s) => el("li", { text: s }))),
    lines.length
      ? el("ul", { class: "geon-plan-diff-collectives" }, ...lines)
      : el("p", { class: "small muted", text: "The same collectives move in both plans." }),
    el("p", {
      class: "small muted",
      text: `Placed differently: ${placedLine(diff.placements.map((p) => p.operationLabel))}`,
    }),
  );
}
