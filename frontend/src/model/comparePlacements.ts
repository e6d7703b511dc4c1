// How each side of Compare splits each operation (issue 35), read from what the side places: the
// plan cost's ``placements`` (the server reads them from the placed document, as plan_diff does).
// A plan made by axis mapping names no operation in its ``spec``, so its spec alone would say
// "whole" for every operation; its placements say "heads over tp (2)". A cost without placements
// (an answer cached before they were added, or one past the list bound) falls back to the spec.

import type { Plan, PlanCost, SpecEntry } from "./plans";
import type { NotSplit } from "./planWhy";

/** How one operation runs as placed (the server's ``OperationPlacement``). */
export interface OperationPlacement {
  operation: string;
  label: string;
  /** Index axis -> parts, for each axis cut in more than one. */
  split: Record<string, number>;
  /** Index axis -> the mesh axis it is spread over (null: whole, or no one mesh axis decides it). */
  over: Record<string, string> | null;
  /** Pieces it runs in (1: whole). */
  parts: number;
}

/** One side's split of an operation: ``text`` for the table, ``key`` to tell two sides apart
 * (the same split with or without a reason is the same split). */
export interface SideSplit {
  text: string;
  key: string;
}

/** "heads over tp (2)", "N over dp (2), H over tp (4)", "H into 2"; "whole" for one part. */
export function describePlacement(p: OperationPlacement): string {
  if (p.parts <= 1) return "whole";
  return Object.entries(p.split)
    .map(([axis, n]) =>
      p.over?.[axis] ? `${axis} over ${p.over[axis]} (${n})` : `${axis} into ${n}`,
    )
    .join(", ");
}

/** How a side splits each operation: by id, from its cost's placements (a whole operation with the
 * plan's reason for leaving it whole, "whole (it contracts or reduces d256)"); null when the cost
 * carries none, so the caller reads the spec. */
export function placedSplits(plan: Plan, cost: PlanCost): Map<string, SideSplit> | null {
  if (!cost.placements) return null;
  const why = new Map(
    ((plan.applications?.notSplit ?? []) as NotSplit[]).map((e) => [e.operation, e.reason]),
  );
  const out = new Map<string, SideSplit>();
  for (const p of cost.placements) {
    const text = describePlacement(p);
    const reason = text === "whole" ? why.get(p.operation) : undefined;
    out.set(p.operation, { text: reason ? `whole (${reason})` : text, key: text });
  }
  return out;
}

/** The operations the sides name (spec or placements), in ``order`` (document order) where it
 * knows them, then as the sides list them. */
export function comparedOperations(
  sides: { plan: Plan; cost: PlanCost }[],
  order: string[],
): string[] {
  const ids = new Set<string>();
  for (const { plan, cost } of sides) {
    for (const id of Object.keys(plan.spec)) ids.add(id);
    for (const p of cost.placements ?? []) ids.add(p.operation);
  }
  const at = new Map(order.map((id, i) => [id, i]));
  const listed = [...ids];
  return listed.sort(
    (x, y) =>
      (at.get(x) ?? order.length + listed.indexOf(x)) -
      (at.get(y) ?? order.length + listed.indexOf(y)),
  );
}

/** A side's split of one operation: its placement where the cost lists it, else its spec entry
 * (described by ``describe``). */
export function sideSplit(
  placed: Map<string, SideSplit> | null,
  spec: Record<string, SpecEntry>,
  id: string,
  describe: (e: SpecEntry | undefined) => string,
): SideSplit {
  const found = placed?.get(id);
  if (found) return found;
  const text = describe(spec[id]);
  return { text, key: text };
}
