// An operation's applications (its shards) and how their output ranges cover each output tensor:
// the cells no application writes (gaps) and the cells more than one writes (overlaps), computed
// exactly on the grid that the ranges' boundaries cut (as the server's
// ApplicationOutputRangeCoverageIsExact does), so the result never depends on the tensor's size.

import {
  APPLICATION,
  INDEX_AXES,
  IPF_INDEX,
  nodeById,
  selections,
  tensorRange,
  type LoomDocument,
  type Range,
} from "./document";

export interface ApplicationView {
  id: string;
  /** The application's index range (its IPFIndex tag), or null when it has none. */
  index: Range | null;
  /** Output port -> the ranges it writes, in order. */
  outputs: { port: string; tensorId: string; range: Range }[];
  inputs: { port: string; tensorId: string; range: Range }[];
}

export interface Coverage {
  tensorId: string;
  /** The tensor's range. */
  range: Range;
  /** The applications' output ranges on this tensor. */
  written: { applicationId: string; range: Range }[];
  /** Boxes no application writes. */
  gaps: Range[];
  /** Boxes written by more than one application, with how many. */
  overlaps: (Range & { count: number })[];
}

function isRange(r: unknown): r is Range {
  const v = r as Range | null;
  return !!v && Array.isArray(v.start) && Array.isArray(v.end) && v.start.length === v.end.length;
}

/** The index axes of an operation (its IndexAxes tag), or positional names d0, d1, ... */
export function indexAxesOf(doc: LoomDocument, opId: string): string[] {
  const op = nodeById(doc).get(opId);
  const axes = (op?.tags?.[INDEX_AXES] as { axes?: unknown } | undefined)?.axes;
  if (Array.isArray(axes) && axes.every((a) => typeof a === "string")) return axes as string[];
  const index = op?.tags?.[IPF_INDEX];
  return isRange(index) ? index.start.map((_, i) => `d${i}`) : [];
}

export function applicationsOf(doc: LoomDocument, opId: string): ApplicationView[] {
  return applicationsByOperation(doc, opId).get(opId) ?? [];
}

/** Every operation's applications in one pass over the document (or only ``only``'s). */
export function applicationsByOperation(
  doc: LoomDocument,
  only?: string,
): Map<string, ApplicationView[]> {
  const byOp = new Map<string, ApplicationView[]>();
  for (const node of doc.nodes) {
    const opId = node.body.operationId;
    if (
      node.type !== APPLICATION ||
      typeof opId !== "string" ||
      (only !== undefined && opId !== only)
    )
      continue;
    const out = byOp.get(opId) ?? [];
    byOp.set(opId, out);
    const side = (io: unknown) =>
      [...selections(io)].flatMap(([port, list]) =>
        list
          .filter((s) => isRange(s.range))
          .map((s) => ({ port, tensorId: s.tensorId, range: s.range })),
      );
    const index = node.tags?.[IPF_INDEX];
    out.push({
      id: node.id,
      index: isRange(index) ? index : null,
      outputs: side(node.body.outputs),
      inputs: side(node.body.inputs),
    });
  }
  return byOp;
}

/** Sorted distinct cut points of one dimension, clipped to [lo, hi]. */
function cuts(lo: number, hi: number, ranges: Range[], d: number): number[] {
  const set = new Set([lo, hi]);
  for (const r of ranges) {
    for (const v of [r.start[d]!, r.end[d]!]) if (v > lo && v < hi) set.add(v);
  }
  return [...set].sort((a, b) => a - b);
}

const inside = (cell: Range, r: Range): boolean =>
  cell.start.every((s, d) => s >= r.start[d]! && cell.end[d]! <= r.end[d]!);

/** Merge boxes that differ only in the last dimension and touch there (keeps the lists short). */
function merge<T extends Range>(boxes: T[], same: (a: T, b: T) => boolean): T[] {
  const out: T[] = [];
  for (const b of boxes) {
    const prev = out[out.length - 1];
    const d = b.start.length - 1;
    if (
      prev &&
      same(prev, b) &&
      d >= 0 &&
      prev.end[d] === b.start[d] &&
      prev.start.every((s, i) => i === d || (s === b.start[i] && prev.end[i] === b.end[i]))
    ) {
      prev.end = [...prev.end.slice(0, d), b.end[d]!];
    } else out.push({ ...b, start: [...b.start], end: [...b.end] });
  }
  return out;
}

/** Gaps and overlaps of the written ranges inside ``range`` (cells outside it are ignored). */
export function coverOf(
  range: Range,
  written: Range[],
): { gaps: Range[]; overlaps: (Range & { count: number })[] } {
  const rank = range.start.length;
  if (range.start.some((s, d) => s >= range.end[d]!)) return { gaps: [], overlaps: [] };
  const axes = Array.from({ length: rank }, (_, d) =>
    cuts(range.start[d]!, range.end[d]!, written, d),
  );
  const gaps: Range[] = [];
  const overlaps: (Range & { count: number })[] = [];
  const at = new Array<number>(rank).fill(0);
  for (;;) {
    const cell: Range = {
      start: at.map((i, d) => axes[d]![i]!),
      end: at.map((i, d) => axes[d]![i + 1]!),
    };
    const count = written.filter((r) => inside(cell, r)).length;
    if (count === 0) gaps.push(cell);
    else if (count > 1) overlaps.push({ ...cell, count });
    let d = rank - 1;
    while (d >= 0) {
      at[d]! += 1;
      if (at[d]! < axes[d]!.length - 1) break;
      at[d] = 0;
      d -= 1;
    }
    if (d < 0) break;
  }
  return {
    gaps: merge(gaps, () => true),
    overlaps: merge(overlaps, (a, b) => a.count === b.count),
  };
}

/** How the operation's applications cover each of its output tensors (empty when it has none). */
export function coverage(doc: LoomDocument, opId: string): Coverage[] {
  const apps = applicationsOf(doc, opId);
  if (!apps.length) return [];
  const nodes = nodeById(doc);
  const op = nodes.get(opId);
  const out: Coverage[] = [];
  for (const list of selections(op?.body.outputs).values()) {
    for (const sel of list) {
      const range = tensorRange(nodes.get(sel.tensorId)) ?? (isRange(sel.range) ? sel.range : null);
      if (!range) continue;
      const written = apps.flatMap((a) =>
        a.outputs
          .filter((o) => o.tensorId === sel.tensorId)
          .map((o) => ({ applicationId: a.id, range: o.range })),
      );
      out.push({
        tensorId: sel.tensorId,
        range,
        written,
        ...coverOf(
          range,
          written.map((w) => w.range),
        ),
      });
    }
  }
  return out;
}

export const showRange = (r: Range): string =>
  `[${r.start.map((s, i) => `${s}:${r.end[i]}`).join(", ")}]`;
