// Plan A and plan B side by side (DESIGN.md §4): the rows of Compare's table, each plan's cost
// figures (lower is better) and, per operation, how each plan splits it. Pure functions of the
// document, the plans and the server's cost of each; ui/planCompare.ts draws the table.

import { nodeById, selections, type LoomDocument, type LoomNode } from "./document";
import { showBytes, showSeconds, type Collective } from "./costs";
import { dominantTerm, memoryPartRows } from "./compareTerms";
import { comparedOperations, placedSplits, sideSplit } from "./comparePlacements";
import { describeEntry } from "./planSpecs";
import type { Plan, PlanCost } from "./plans";

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
  /** Operation rows: whether the two plans split it differently (null: a side's cost did not list
   * the operation, past the server's GEON_PLAN_COST_LIST_ROWS, so it cannot be told). */
  differs?: boolean | null;
}

/** An operation's name in a table: its label (or kernel) and what it writes ("op:dot → x·y"),
 * read from ``nodes`` (the document's, model/document.ts ``nodeById``, built once per table);
 * ``fallback`` (the server's placement label) where the document does not hold it. */
export function operationName(
  nodes: ReadonlyMap<string, LoomNode>,
  id: string,
  fallback?: string,
): string {
  const op = nodes.get(id);
  if (!op) return fallback ?? id.slice(0, 8);
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
  const nodes = doc ? nodeById(doc) : new Map<string, LoomNode>();
  const labels = new Map(
    [...(a.cost.placements ?? []), ...(b.cost.placements ?? [])].map((p) => [p.operation, p.label]),
  );
  for (const id of comparedOperations([a, b], doc ? doc.nodes.map((n) => n.id) : [])) {
    const sa = sideSplit(pa, a.plan.spec, id, describeEntry, a.cost);
    const sb = sideSplit(pb, b.plan.spec, id, describeEntry, b.cost);
    rows.push({
      kind: "operation",
      label: operationName(nodes, id, labels.get(id)),
      a: sa.text,
      b: sb.text,
      better: null,
      // a side whose list left the operation out does not say how it splits it
      differs: sa.key === null || sb.key === null ? null : sa.key !== sb.key,
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
