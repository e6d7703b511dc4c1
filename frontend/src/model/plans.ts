// Shard plans (DESIGN.md §4, REST /api/v1/graphs/<id>/plans): what a plan is (its mesh, spec,
// axis mapping and inputs), what the server's cost of one holds, one line for a plan, and which
// plans the document has now. The spec read from the document and the edit ops to a plan are in
// model/planSpecs.ts, the side-by-side comparison of two plans in model/compareRows.ts, a plan typed
// by hand in model/planTexts.ts. Pure functions of the document and the plans; the panel
// (ui/plans.ts) calls the server and shows what they return.

import { APPLICATION, type LoomDocument } from "./document";
import type { ProfiledCost } from "./costs";
import { describePipeline, type PipelineCostSummary, type PlanPipeline } from "./pipelines";
import type { OperationPlacement } from "./comparePlacements";
import { describeEntry, opsToPlan } from "./planSpecs";

/** How one operation is split: the keys the server's plan spec (and the ``shard`` op) accept. */
export interface SpecEntry {
  dim?: string | number;
  parts?: number;
  chunk?: number;
  sizes?: number[];
  grid?: Record<string, number>;
  over?: Record<string, string>;
}

export interface Mesh {
  name: string;
  axes: Record<string, number>;
}

export interface Plan {
  id: number;
  name: string;
  mesh: Mesh;
  spec: Record<string, SpecEntry>;
  /** Logical axis -> mesh axis, for every operation the spec does not name (issue 16 item 2). */
  axisMapping?: Record<string, string>;
  /** Where graph inputs live, by label. */
  inputs?: Record<string, InputLayout>;
  /** Pipeline stages (issue 33; null or absent: none), shown on the card by describePlan. */
  pipeline?: PlanPipeline | null;
  /** What the server wrote when it last generated the plan: its Applications by operation. */
  applications?: { operations?: Record<string, string[]> } & Record<string, unknown>;
}

/** Where a graph input lives under a plan (geon.core.plans.inputs). */
export type InputLayout = "replicated" | { over: Record<string, string> } | { device: number[] };

/** Whether the server must generate the plan to know its applications: it maps axes or places
 * inputs, which only the server's planner expands (the editor diffs per-operation specs alone). */
export function isMapped(plan: Plan): boolean {
  return (
    Object.keys(plan.axisMapping ?? {}).length > 0 || Object.keys(plan.inputs ?? {}).length > 0
  );
}

/** One line for what a plan does: "N→dp, F→tp" for a mapping, else how many operations it splits. */
export function describePlan(plan: Plan): string {
  const devices = Object.values(plan.mesh.axes).reduce((n, k) => n * k, 1);
  const mapping = Object.entries(plan.axisMapping ?? {}).map(([a, m]) => `${a}→${m}`);
  const split = Object.values(plan.spec).filter((e) => describeEntry(e) !== "whole").length;
  const what = mapping.length
    ? `maps ${mapping.join(", ")}`
    : `${split} of ${Object.keys(plan.spec).length} operations split`;
  return `${devices} devices · ${what}${plan.pipeline ? ` · ${describePipeline(plan.pipeline, plan.mesh)}` : ""}`;
}

/** Whether the document holds exactly the Applications the server wrote when it last generated
 * ``plan`` (none of them removed, none added since). */
function generatedIn(doc: LoomDocument, plan: Plan): boolean {
  const wanted = new Set(Object.values(plan.applications?.operations ?? {}).flat());
  const present = doc.nodes.filter((n) => n.type === APPLICATION).map((n) => n.id);
  return wanted.size > 0 && present.length === wanted.size && present.every((id) => wanted.has(id));
}

export interface DeviceCost {
  mesh: string;
  coords: number[];
  inputs: number;
  outputs: number;
  temporaries: number;
  total: number;
  /** Equal devices grouped past the server's row bound (as a ledger row's). */
  count?: number;
  devices?: number[][];
}

export interface PlanCost extends Partial<ProfiledCost> {
  version: number;
  devices: DeviceCost[];
  transfers: { source: number[]; target: number[]; bytes: number }[];
  transferBytes: number;
  pipeline?: PipelineCostSummary;
  /** How each operation runs as placed (issue 35), in document order. */
  placements?: OperationPlacement[];
  /** Rows each list left out past the server's bounds. */
  omitted?: Record<string, number>;
}

/** The plans whose applications the document has now. */
export function currentPlans(doc: LoomDocument, plans: Plan[]): number[] {
  return plans
    .filter((p) => {
      if (isMapped(p)) return generatedIn(doc, p);
      try {
        return opsToPlan(doc, p).length === 0;
      } catch {
        return false;
      }
    })
    .map((p) => p.id);
}

export {
  DEVICES,
  describeEntry,
  entryOf,
  evenSizes,
  opsToPlan,
  planFromDocument,
  PlanError,
  shardsOf,
  type PlanOp,
} from "./planSpecs";
export { collectiveCounts, compareRows, operationName, type CompareRow } from "./compareRows";
export { parseInputs, parseMapping, parseMesh, PlanTextError, planTexts } from "./planTexts";
export { dominantTerm, profileAssumptions } from "./compareTerms";
export { notSplitLines, operationTitle, type NotSplit } from "./planWhy";
