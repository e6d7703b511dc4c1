/**
 * What the editor shows of a plan's cost on the canvas and remembers of it (issue 16 item 7):
 * a label per edge that carries a collective (kind, mesh axes, bytes, time) with a stroke width
 * that grows with its bytes, and the one hardware-profile choice persisted in localStorage and
 * sent as a plan cost's `?profile=`. Bytes and seconds read as in model/plans.ts.
 */

import { showBytes, showSeconds, type Collective } from "../model/costs";
import type { EdgeLabel } from "../render/scene";

/** Edge stroke width for `bytes` moved: log2 scale from `min` px (1 byte or less) to `max` px
 * (1 TiB or more), so an edge's weight grows with its bytes but never leaves those bounds. */
export function edgeWidth(bytes: number, min = 2, max = 8): number {
  if (!(bytes > 1)) return min;
  const t = Math.min(1, Math.log2(bytes) / 40);
  return min + t * (max - min);
}

/** The key of the drawn edge from tensor `tensor` into operation `consumer`. */
export const edgeKey = (tensor: string, consumer: string): string => `${tensor}->${consumer}`;

/** The label of each edge (tensor -> consumer) that carries collectives: "all-reduce over tp ·
 * 512 B · 4 µs" (several on one edge are joined by "; "). */
export function edgeLabels(collectives: readonly Collective[]): Map<string, EdgeLabel> {
  const by = new Map<string, Collective[]>();
  for (const c of collectives) {
    const key = edgeKey(c.tensor, c.consumer);
    by.set(key, [...(by.get(key) ?? []), c]);
  }
  const labels = new Map<string, EdgeLabel>();
  for (const [key, cs] of by) {
    const bytes = cs.reduce((s, c) => s + c.bytes, 0);
    const text = cs
      .map(
        (c) =>
          `${c.kind}${c.meshAxes.length ? ` over ${c.meshAxes.join(", ")}` : ""} · ${showBytes(c.bytes)} · ${showSeconds(c.seconds)}`,
      )
      .join("; ");
    labels.set(key, { text, width: edgeWidth(bytes), bytes });
  }
  return labels;
}

/** The localStorage key holding the editor's chosen hardware profile name. */
export const PROFILE_KEY = "geon.profile";

/** The persisted profile name when it is one of `names`, else `fallback`. */
export function chosenProfile(
  storage: Storage,
  names: readonly string[],
  fallback: string,
): string {
  const stored = storage.getItem(PROFILE_KEY);
  return stored !== null && names.includes(stored) ? stored : fallback;
}

/** Remember `name` as the editor's profile. */
export function rememberProfile(storage: Storage, name: string): void {
  storage.setItem(PROFILE_KEY, name);
}
