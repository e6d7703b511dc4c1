// Shard plans (DESIGN.md §4, REST /api/v1/graphs/<id>/plans): the spec that says how the
// document is sharded now, the edit ops that make the document's applications match a plan, and
// the side-by-side comparison of two plans with the server's cost of each. Pure functions of the
// document and the plans; the panel (ui/plans.ts) calls the server and shows what they return.

import {
  APPLICATION,
  IPF_INDEX,
  IPF_SIGNATURE,
  INDEX_AXES,
  nodeById,
  OPERATION,
  selections,
  type LoomDocument,
  type LoomNode,
  type Range,
} from "./document";
import { showBytes, showSeconds, type Collective, type ProfiledCost } from "./costs";
import { dominantTerm, memoryPartRows } from "./compareTerms";
import { applicationsByOperation, applicationsOf, showRange, type ApplicationView } from "./shards";
import { describePipeline, type PipelineCostSummary, type PlanPipeline } from "./pipelines";
import {
  comparedOperations,
  placedSplits,
  sideSplit,
  type OperationPlacement,
} from "./comparePlacements";

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

export class PlanError extends Error {}

/** The mesh axis of the 1-D mesh a plan saved from the document is placed on. */
export const DEVICES = "devices";

const isRange = (r: unknown): r is Range => {
  const v = r as Range | null;
  return !!v && Array.isArray(v.start) && Array.isArray(v.end) && v.start.length === v.end.length;
};

/** An operation that can be sharded: it has an index range (IPFIndex) and an IPFSignature. */
function shardable(op: LoomNode): Range | null {
  const index = op.tags?.[IPF_INDEX];
  return op.type === OPERATION && isRange(index) && op.tags?.[IPF_SIGNATURE] ? index : null;
}

/** The name the spec uses for index dim ``d``: the IndexAxes name, or the dim's number for a positional op. */
function dimName(op: LoomNode, d: number): string | number {
  const axes = (op.tags?.[INDEX_AXES] as { axes?: unknown } | undefined)?.axes;
  return Array.isArray(axes) && typeof axes[d] === "string" ? (axes[d] as string) : d;
}

function dimIndex(op: LoomNode, dim: string | number, rank: number): number {
  if (typeof dim === "number") return dim;
  if (/^\d+$/.test(dim)) return Number(dim);
  for (let d = 0; d < rank; d++) if (dimName(op, d) === dim) return d;
  throw new PlanError(`index axis "${dim}" does not exist on operation "${op.label ?? op.id}"`);
}

/** Sizes of ``k`` contiguous blocks of ``n`` differing by at most one, larger first (numpy.array_split). */
export function evenSizes(n: number, k: number): number[] {
  const q = Math.floor(n / k);
  const r = n % k;
  return Array.from({ length: k }, (_, i) => q + (i < r ? 1 : 0));
}

function chunkSizes(n: number, chunk: number): number[] {
  const out: number[] = [];
  for (let at = 0; at < n; at += chunk) out.push(Math.min(chunk, n - at));
  return out;
}

const same = (a: number[], b: number[]): boolean =>
  a.length === b.length && a.every((v, i) => v === b[i]);

/** The entry that runs an operation whole: one shard, the whole index range. */
const wholeEntry = (op: LoomNode): SpecEntry => ({ dim: dimName(op, 0), parts: 1 });

/**
 * The spec entry that gives the operation exactly the applications it has now. Its applications
 * must cut its index range into a grid (no gap, no overlap); an uneven grid over two or more
 * dims is refused, as the server's ``grid`` takes a number of parts per dim.
 */
export function entryOf(
  doc: LoomDocument,
  op: LoomNode,
  apps: ApplicationView[] = applicationsOf(doc, op.id),
): SpecEntry {
  const range = shardable(op);
  const name = op.label ?? op.id;
  if (!range)
    throw new PlanError(
      `operation "${name}" has no index range or IPFSignature; it cannot be sharded`,
    );
  if (!apps.length) return wholeEntry(op);
  const boxes = apps.map((a) => a.index);
  if (boxes.some((b) => !b || b.start.length !== range.start.length)) {
    throw new PlanError(
      `operation "${name}" has an application without an index range of its rank; split it again before saving`,
    );
  }
  const rank = range.start.length;
  // the cut points of each dim; a grid has one box per cell of their product
  const cuts = Array.from({ length: rank }, (_, d) =>
    [...new Set(boxes.flatMap((b) => [b!.start[d]!, b!.end[d]!]))].sort((a, b) => a - b),
  );
  const cells = cuts.reduce((n, c) => n * (c.length - 1), 1);
  const seen = new Set(boxes.map((b) => showRange(b!)));
  const grid =
    seen.size === boxes.length &&
    cells === boxes.length &&
    cuts.every((c, d) => c[0] === range.start[d] && c[c.length - 1] === range.end[d]) &&
    boxes.every((b) =>
      b!.start.every((s, d) => cuts[d]!.indexOf(b!.end[d]!) === cuts[d]!.indexOf(s) + 1),
    );
  if (!grid)
    throw new PlanError(
      `operation "${name}" has applications that do not cut its index range into a grid (a gap or an overlap); fix its coverage or split it again before saving`,
    );
  const sizes = cuts.map((c) => c.slice(1).map((v, i) => v - c[i]!));
  const cut = sizes.map((s, d) => [d, s] as const).filter(([, s]) => s.length > 1);
  if (!cut.length) return wholeEntry(op);
  if (cut.length === 1) {
    const [d, s] = cut[0]!;
    const n = range.end[d]! - range.start[d]!;
    if (same(s, evenSizes(n, s.length))) return { dim: dimName(op, d), parts: s.length };
    if (same(s, chunkSizes(n, s[0]!))) return { dim: dimName(op, d), chunk: s[0]! };
    return { dim: dimName(op, d), sizes: [...s] };
  }
  const out: Record<string, number> = {};
  for (const [d, s] of cut) {
    if (!same(s, evenSizes(range.end[d]! - range.start[d]!, s.length))) {
      throw new PlanError(
        `operation "${name}" is cut unevenly along "${dimName(op, d)}" in a grid; a plan's grid takes a number of parts per axis, so split it again as a grid before saving`,
      );
    }
    out[String(dimName(op, d))] = s.length;
  }
  return { grid: out };
}

/** The plan (mesh and spec) of the document as it is sharded now: every shardable operation, whole ones as one part. */
export function planFromDocument(
  doc: LoomDocument,
  name: string,
): { mesh: Mesh; spec: Record<string, SpecEntry> } {
  const spec: Record<string, SpecEntry> = {};
  const errors: string[] = [];
  let devices = 1;
  const byOp = applicationsByOperation(doc);
  for (const op of doc.nodes) {
    if (!shardable(op)) continue;
    const apps = byOp.get(op.id) ?? [];
    try {
      spec[op.id] = entryOf(doc, op, apps);
      devices = Math.max(devices, apps.length);
    } catch (e) {
      if (!(e instanceof PlanError)) throw e;
      errors.push(e.message);
    }
  }
  if (errors.length) throw new PlanError(errors.join("; "));
  if (!Object.keys(spec).length)
    throw new PlanError("the graph has no operation that can be sharded");
  return { mesh: { name: name.trim(), axes: { [DEVICES]: devices } }, spec };
}

/** The index ranges a spec entry gives the operation (as the server's shard op cuts them), or null for "whole". */
export function shardsOf(op: LoomNode, entry: SpecEntry, mesh?: Mesh): Range[] | null {
  const range = shardable(op);
  if (!range)
    throw new PlanError(
      `operation "${op.label ?? op.id}" has no index range or IPFSignature; it cannot be sharded`,
    );
  const rank = range.start.length;
  const length = (d: number) => range.end[d]! - range.start[d]!;
  const perDim: number[][] = Array.from({ length: rank }, (_, d) => [length(d)]);
  if (entry.grid || entry.over) {
    const parts =
      entry.grid ??
      Object.fromEntries(
        Object.entries(entry.over!).map(([d, axis]) => [d, mesh?.axes[axis] ?? 1]),
      );
    for (const [dim, k] of Object.entries(parts)) {
      const d = dimIndex(op, dim, rank);
      perDim[d] = evenSizes(length(d), k);
    }
  } else if (entry.dim !== undefined) {
    const d = dimIndex(op, entry.dim, rank);
    perDim[d] = entry.sizes
      ? [...entry.sizes]
      : entry.chunk
        ? chunkSizes(length(d), entry.chunk)
        : evenSizes(length(d), entry.parts ?? 1);
  }
  if (perDim.every((s) => s.length === 1)) return null;
  let out: Range[] = [{ start: [], end: [] }];
  perDim.forEach((s, d) => {
    const spans: [number, number][] = [];
    let at = range.start[d]!;
    for (const n of s) {
      spans.push([at, at + n]);
      at += n;
    }
    out = out.flatMap((r) =>
      spans.map(([a, b]) => ({ start: [...r.start, a], end: [...r.end, b] })),
    );
  });
  return out;
}

const key = (ranges: Range[]): string => ranges.map(showRange).sort().join(" ");

/** Whether the operation's applications are what the entry gives (null entry: runs whole). */
function matches(op: LoomNode, apps: ApplicationView[], want: Range[] | null): boolean {
  const have = apps.map((a) => a.index);
  if (have.some((h) => !h)) return false;
  if (want === null)
    return (
      apps.length === 0 || (apps.length === 1 && showRange(have[0]!) === showRange(shardable(op)!))
    );
  return key(have as Range[]) === key(want);
}

/** The shard op's fields for an entry (``over`` needs the plan's mesh: it becomes a grid of the mesh axes' sizes). */
function shardFields(entry: SpecEntry, mesh?: Mesh): SpecEntry {
  if (entry.over)
    return {
      grid: Object.fromEntries(
        Object.entries(entry.over).map(([d, axis]) => [d, mesh?.axes[axis] ?? 1]),
      ),
    };
  const out: SpecEntry = {};
  for (const k of ["dim", "parts", "chunk", "sizes", "grid"] as const)
    if (entry[k] !== undefined) (out as Record<string, unknown>)[k] = entry[k];
  return out;
}

export type PlanOp =
  { op: "remove_node"; id: string } | ({ op: "shard"; operation: string } & SpecEntry);

/**
 * The edit ops that make the document's applications what the plan gives: a ``shard`` op per
 * operation cut differently, and the removal of the applications of an operation the plan runs
 * whole (or does not name). Empty when the document already matches.
 */
export function opsToPlan(doc: LoomDocument, plan: Pick<Plan, "spec" | "mesh">): PlanOp[] {
  const nodes = nodeById(doc);
  const missing = Object.keys(plan.spec).filter((id) => nodes.get(id)?.type !== OPERATION);
  if (missing.length)
    throw new PlanError(
      `the plan names operation${missing.length === 1 ? "" : "s"} ${missing.map((m) => `"${m}"`).join(", ")} that the graph no longer has`,
    );
  const ops: PlanOp[] = [];
  const byOp = applicationsByOperation(doc);
  for (const op of doc.nodes) {
    if (op.type !== OPERATION) continue;
    const entry = plan.spec[op.id];
    const apps = byOp.get(op.id) ?? [];
    if (!shardable(op)) {
      if (entry)
        throw new PlanError(
          `operation "${op.label ?? op.id}" has no index range or IPFSignature; it cannot be sharded`,
        );
      continue;
    }
    const want = entry ? shardsOf(op, entry, plan.mesh) : null;
    if (matches(op, apps, want)) continue;
    if (want === null) ops.push(...apps.map((a) => ({ op: "remove_node" as const, id: a.id })));
    else ops.push({ op: "shard", operation: op.id, ...shardFields(entry!, plan.mesh) });
  }
  return ops;
}

/** One line for how an entry splits an operation: "H into 2", "grid H×N 2×2", "whole". */
export function describeEntry(entry: SpecEntry | undefined): string {
  if (!entry) return "whole";
  if (entry.over)
    return `over ${Object.entries(entry.over)
      .map(([d, a]) => `${d}→${a}`)
      .join(", ")}`;
  if (entry.grid)
    return `grid ${Object.keys(entry.grid).join("×")} ${Object.values(entry.grid).join("×")}`;
  if (entry.sizes)
    return entry.sizes.length > 1 ? `${entry.dim} as ${entry.sizes.join(", ")}` : "whole";
  if (entry.chunk) return `${entry.dim} by ${entry.chunk}`;
  return (entry.parts ?? 1) > 1 ? `${entry.dim} into ${entry.parts}` : "whole";
}

/** The collectives by kind, most first: "all-reduce ×2, all-gather ×1" ("none" for none). */
export function collectiveCounts(collectives: readonly Collective[]): string {
  const counts = new Map<string, number>();
  for (const c of collectives) counts.set(c.kind, (counts.get(c.kind) ?? 0) + 1);
  const sorted = [...counts].sort((x, y) => y[1] - x[1] || x[0].localeCompare(y[0]));
  return sorted.length ? sorted.map(([kind, n]) => `${kind} ×${n}`).join(", ") : "none";
}

export interface CompareRow {
  /** "cost" rows compare figures (lower is better); "operation" rows show how each plan splits it. */
  kind: "cost" | "operation";
  label: string;
  a: string;
  b: string;
  /** Which plan has the better (lower) figure; null when equal or not a figure. */
  better: "a" | "b" | null;
  /** Operation rows: whether the two plans split it differently. */
  differs?: boolean;
}

/** An operation's name in a table: its label (or kernel) and what it writes ("op:dot → x·y"). */
export function operationName(doc: LoomDocument | null, id: string): string {
  const nodes = doc ? nodeById(doc) : new Map<string, LoomNode>();
  const op = nodes.get(id);
  if (!op) return id.slice(0, 8);
  // an unlabelled output is named as the canvas names it ("add out", model/document.ts), never by its id
  const unlabelled = `${op.label ?? String(op.body.kernel ?? "operation").replace(/^op:/, "")} out`;
  const outs = [...selections(op.body.outputs).values()]
    .flat()
    .map((s) => nodes.get(s.tensorId)?.label ?? unlabelled);
  return `${op.label ?? String(op.body.kernel ?? "operation")}${outs.length ? ` → ${outs.join(", ")}` : ""}`;
}

/** Plan A and plan B side by side: their costs (lower is better) and how each splits each operation. */
export function compareRows(
  doc: LoomDocument | null,
  a: { plan: Plan; cost: PlanCost },
  b: { plan: Plan; cost: PlanCost },
): CompareRow[] {
  const figure = (
    label: string,
    x: number,
    y: number,
    show: (n: number) => string = String,
  ): CompareRow => ({
    kind: "cost",
    label,
    a: show(x),
    b: show(y),
    better: x < y ? "a" : y < x ? "b" : null,
  });
  const peak = (c: PlanCost) => Math.max(0, ...c.devices.map((d) => d.total));
  const sum = (c: PlanCost) => c.devices.reduce((s, d) => s + d.total, 0);
  const rows: CompareRow[] = [
    {
      kind: "cost",
      label: "devices used",
      a: String(a.cost.devices.length),
      b: String(b.cost.devices.length),
      better: null,
    },
    figure("transfers", a.cost.transfers.length, b.cost.transfers.length),
    figure("bytes moved", a.cost.transferBytes, b.cost.transferBytes, showBytes),
    figure("peak memory per device", peak(a.cost), peak(b.cost), showBytes),
    figure("memory on all devices", sum(a.cost), sum(b.cost), showBytes),
    ...profiledRows(a.cost, b.cost, figure),
  ];
  // per device (by coordinates): its total memory in each plan
  const coords = [
    ...new Set([...a.cost.devices, ...b.cost.devices].map((d) => JSON.stringify(d.coords))),
  ].sort();
  for (const c of coords) {
    const da = a.cost.devices.find((d) => JSON.stringify(d.coords) === c);
    const db = b.cost.devices.find((d) => JSON.stringify(d.coords) === c);
    const at = JSON.parse(c) as number[];
    const label = at.length ? `device (${at.join(", ")})` : "the one device (no mesh)";
    // a side that does not use the device is not better for its 0 B: it holds the work elsewhere
    const row = figure(label, da?.total ?? 0, db?.total ?? 0, showBytes);
    rows.push({
      ...row,
      a: da ? showBytes(da.total) : "unused",
      b: db ? showBytes(db.total) : "unused",
      better: da && db ? row.better : null,
    });
  }
  // each side's split as it places it (a mapped plan's spec names no operation), else its spec
  const [pa, pb] = [placedSplits(a.plan, a.cost), placedSplits(b.plan, b.cost)];
  for (const id of comparedOperations([a, b], doc ? doc.nodes.map((n) => n.id) : [])) {
    const sa = sideSplit(pa, a.plan.spec, id, describeEntry);
    const sb = sideSplit(pb, b.plan.spec, id, describeEntry);
    rows.push({
      kind: "operation",
      label: operationName(doc, id),
      a: sa.text,
      b: sb.text,
      better: null,
      differs: sa.key !== sb.key,
    });
  }
  return rows;
}

/** The rows of two costs under the same hardware profile: step time, collectives and the
 * ledger's peak memory against the device's capacity (none when either cost has no profile). */
function profiledRows(
  a: PlanCost,
  b: PlanCost,
  figure: (label: string, x: number, y: number, show?: (n: number) => string) => CompareRow,
): CompareRow[] {
  if (
    !a.time ||
    !b.time ||
    !a.collectives ||
    !b.collectives ||
    !a.ledger ||
    !b.ledger ||
    !a.memory ||
    !b.memory
  )
    return [];
  const peak = (c: PlanCost) => Math.max(0, ...(c.ledger ?? []).map((d) => d.peakBytes));
  const moved = (c: PlanCost) => (c.collectives ?? []).reduce((s, x) => s + x.bytes, 0);
  const fits = (c: PlanCost) =>
    c.memory?.overBudget ? `over ${showBytes(c.memory.capacity)}` : "fits";
  const over = (c: PlanCost) => (c.memory?.overBudget ? 1 : 0);
  const profile = a.profile?.name ?? "";
  return [
    figure(`step time, at most (${profile})`, a.time.upper, b.time.upper, showSeconds),
    figure("step time, at least", a.time.lower, b.time.lower, showSeconds),
    {
      ...figure("collectives", a.collectives.length, b.collectives.length),
      a: collectiveCounts(a.collectives),
      b: collectiveCounts(b.collectives),
    },
    figure("bytes in collectives", moved(a), moved(b), showBytes),
    {
      ...figure("step time dominated by", 0, 0),
      a: dominantTerm(a),
      b: dominantTerm(b),
      better: null,
    },
    figure("peak memory, with temporaries", peak(a), peak(b), showBytes),
    ...memoryPartRows(a, b, figure),
    { ...figure("device memory", over(a), over(b)), a: fits(a), b: fits(b) },
  ];
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

/** The error of a plan typed by hand (mesh or mapping), naming the bad part. */
export class PlanTextError extends Error {}

const PAIR = /^\s*([A-Za-z_][\w]*)\s*(?:=|→|->|:)\s*([^\s,]+)\s*$/;

/** Pairs ``a=b`` (or ``a→b``, ``a: b``) separated by commas; ``what`` names them in errors. */
function pairs(text: string, what: string, example: string): [string, string][] {
  const parts = text.split(",").filter((p) => p.trim() !== "");
  if (!parts.length) throw new PlanTextError(`the ${what} is empty; expected e.g. "${example}"`);
  const seen = new Set<string>();
  return parts.map((part) => {
    const m = PAIR.exec(part);
    if (!m)
      throw new PlanTextError(
        `"${part.trim()}" is not valid in the ${what}; expected name=value, e.g. "${example}"`,
      );
    if (seen.has(m[1]!)) throw new PlanTextError(`"${m[1]}" is given twice in the ${what}`);
    seen.add(m[1]!);
    return [m[1]!, m[2]!];
  });
}

/** A mesh typed as ``dp=2, tp=4`` (mesh axis = size). */
export function parseMesh(text: string, name = "mesh"): Mesh {
  const axes: Record<string, number> = {};
  for (const [axis, size] of pairs(text, "mesh", "dp=2, tp=4")) {
    const n = Number(size);
    if (!Number.isInteger(n) || n < 1)
      throw new PlanTextError(
        `mesh axis "${axis}" has size "${size}"; expected a whole number >= 1`,
      );
    axes[axis] = n;
  }
  return { name, axes };
}

/** An axis mapping typed as ``N=dp, F=tp`` (the graph's axis = a mesh axis of ``mesh``). */
export function parseMapping(text: string, mesh: Mesh): Record<string, string> {
  const mapping: Record<string, string> = {};
  for (const [axis, meshAxis] of pairs(text, "axis mapping", "N=dp, F=tp")) {
    if (!(meshAxis in mesh.axes)) {
      throw new PlanTextError(
        `axis "${axis}" is mapped to "${meshAxis}", which is not a mesh axis; expected one of (${Object.keys(mesh.axes).join(", ")})`,
      );
    }
    mapping[axis] = meshAxis;
  }
  return mapping;
}

/** Where a graph input lives under a plan (geon.core.plans.inputs). */
export type InputLayout = "replicated" | { over: Record<string, string> } | { device: number[] };

/**
 * Where inputs live, typed as ``x: N=dp; w1: replicated; b: device 0,1`` (an input by label, then
 * ``replicated``, its axes over mesh axes, or one device's coordinates); inputs not named are
 * replicated on every device.
 */
export function parseInputs(text: string, mesh: Mesh): Record<string, InputLayout> {
  const found: Record<string, InputLayout> = {};
  for (const entry of text.split(";").filter((e) => e.trim() !== "")) {
    // the last colon: an imported tensor's label may hold colons ("onnx::MatMul_193"); where it lives never does
    const at = entry.lastIndexOf(":");
    const label = entry.slice(0, Math.max(0, at)).trim();
    const where = entry.slice(at + 1).trim();
    if (at < 0 || !label || !where)
      throw new PlanTextError(
        `"${entry.trim()}" is not valid where inputs live; expected label: replicated, label: N=dp or label: device 0,1`,
      );
    if (label in found) throw new PlanTextError(`input "${label}" is placed twice`);
    if (where === "replicated") found[label] = "replicated";
    else if (where.startsWith("device")) {
      const coords = where
        .slice("device".length)
        .split(",")
        .map((c) => Number(c.trim()));
      if (
        coords.length !== Object.keys(mesh.axes).length ||
        coords.some((c) => !Number.isInteger(c) || c < 0)
      ) {
        throw new PlanTextError(
          `input "${label}" is placed on "${where}"; expected a device's ${Object.keys(mesh.axes).length} coordinates on the mesh (${Object.keys(mesh.axes).join(", ")}), e.g. device ${Object.keys(
            mesh.axes,
          )
            .map(() => 0)
            .join(",")}`,
        );
      }
      found[label] = { device: coords };
    } else found[label] = { over: parseMapping(where, mesh) };
  }
  return found;
}

/** A plan as the mapping form's texts (what {@link parseMesh}, {@link parseMapping} and
 * {@link parseInputs} read back to the same plan): "dp=2, tp=4", "N=dp, F=tp", "x: N=dp; w1: replicated". */
export function planTexts(plan: Plan): { mesh: string; mapping: string; inputs: string } {
  const pairsText = (m: Record<string, string | number>): string =>
    Object.entries(m)
      .map(([k, v]) => `${k}=${v}`)
      .join(", ");
  const where = (layout: InputLayout): string =>
    layout === "replicated"
      ? "replicated"
      : "device" in layout
        ? `device ${layout.device.join(",")}`
        : pairsText(layout.over);
  return {
    mesh: pairsText(plan.mesh.axes),
    mapping: pairsText(plan.axisMapping ?? {}),
    inputs: Object.entries(plan.inputs ?? {})
      .map(([label, layout]) => `${label}: ${where(layout)}`)
      .join("; "),
  };
}

export { dominantTerm, profileAssumptions } from "./compareTerms";
export { notSplitLines, operationTitle, type NotSplit } from "./planWhy";
