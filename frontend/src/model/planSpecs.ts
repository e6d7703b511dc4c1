// A plan's spec against the document (DESIGN.md §4): the spec entry that says how the document
// shards each operation now (a plan saved from the document), the index ranges an entry cuts an
// operation into, and the edit ops that make the document's applications match a plan. Pure
// functions of the document and the plan (model/plans.ts).

import {
  IPF_INDEX,
  IPF_SIGNATURE,
  INDEX_AXES,
  nodeById,
  OPERATION,
  type LoomDocument,
  type LoomNode,
  type Range,
} from "./document";
import { applicationsByOperation, applicationsOf, showRange, type ApplicationView } from "./shards";
import type { Mesh, Plan, SpecEntry } from "./plans";

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
