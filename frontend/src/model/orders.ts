// The orders a dot's result may take (``params.axes``, issue 21): what the inspector offers,
// from the same inference as everything else (``inferOperation``).

import { inferOperation } from "./derive";
import type { LoomDocument, LoomNode } from "./document";

/** Every order of ``names`` (a handful: the loops of one operation, a dot's result axes). */
export function permutations(names: string[]): string[][] {
  if (names.length <= 1) return [names];
  return names.flatMap((n, i) =>
    permutations([...names.slice(0, i), ...names.slice(i + 1)]).map((rest) => [n, ...rest]),
  );
}

/** The most result axes whose every order the inspector offers (4! = 24). */
const ORDERED_MAX = 4;

/**
 * The orders a dot's result may take (``params.axes``, issue 21): the one the rule gives by
 * default, the current one and every order of the same axes — null when ``op`` is not a dot that
 * infers, or has one axis or more than ``ORDERED_MAX``.
 */
export function dotOrders(
  doc: LoomDocument,
  op: LoomNode,
): { byDefault: string[]; current: string[]; orders: string[][] } | null {
  if (op.body.kernel !== "op:dot") return null;
  const { axes: _chosen, ...rest } = (op.body.params ?? {}) as Record<string, unknown>;
  const plain = inferOperation(doc, { ...op, body: { ...op.body, params: rest } });
  const now = inferOperation(doc, op);
  if (
    plain.kind !== "ok" ||
    now.kind !== "ok" ||
    plain.result.length < 2 ||
    plain.result.length > ORDERED_MAX
  )
    return null;
  return { byDefault: plain.result, current: now.result, orders: permutations(plain.result) };
}
