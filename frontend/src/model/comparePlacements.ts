// How each side of Compare splits each operation (issue 35), read from what the side places: the
// plan cost's ``placements`` (the server reads them from the placed document, as plan_diff does).
// A plan made by axis mapping names no operation in its ``spec``, so its spec alone would say
// "whole" for every operation; its placements say "heads over tp (2)". A cost without placements
// (an answer cached before they were added) falls back to the spec. A cost whose placements the
// server cut at GEON_PLAN_COST_LIST_ROWS (``omitted.placements`` > 0) says "not listed" for an
// operation it left out: its spec would say "whole" (a mapped plan's names no operation), which
// is wrong for a split operation; the comparison leaves such a row's ``differs`` unknown (null).

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
 * (the same split with or without a reason is the same split; null: the side did not list it). */
export interface SideSplit {
  text: string;
  key: string | null;
}

/** What a side says of an operation its cost's placements left out past the server's bound. */
export const NOT_LISTED = "not listed (over GEON_PLAN_COST_LIST_ROWS)";

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
  // each id's place, computed once: document order, then the order the sides list them
  const place = new Map([...ids].map((id, i) => [id, at.get(id) ?? order.length + i]));
  return [...ids].sort((x, y) => place.get(x)! - place.get(y)!);
}

/** A side's split of one operation: its placement where the cost lists it; "not listed" (key null)
 * where the cost's placements were cut past the server's bound and left it out; else its spec
 * entry (described by ``describe``). */
export function sideSplit(
  placed: Map<string, SideSplit> | null,
  spec: Record<string, SpecEntry>,
  id: string,
  describe: (e: SpecEntry | undefined) => string,
  cost?: Pick<PlanCost, "omitted">,
): SideSplit {
  const found = placed?.get(id);
  if (found) return found;
  if (placed && (cost?.omitted?.placements ?? 0) > 0) return { text: NOT_LISTED, key: null };
  const text = describe(spec[id]);
  return { text, key: text };
}
