// The kernel catalogue as the server publishes it (geon.core.ops.catalogue_json()). The JSON file
// is a copy; tests/browser/test_catalogue.py fails when it drifts from the server's.

import type { KernelInfo } from "./infer/dispatch";
import data from "./catalogue.json";

export const CATALOGUE: ReadonlyMap<string, KernelInfo> = new Map(
  (data as KernelInfo[]).map((k) => [k.name, k]),
);

/** Catalogue kernels whose name or doc contains every word of ``query`` (case-insensitive),
 * ranked (issue 36): the kernel the query names exactly ("sum" or "op:sum") first, then the
 * ``preferred`` ones (a puzzle's allowed kernels), then names starting with the query, then the
 * rest, each group in the catalogue's order. */
export function searchKernels(query: string, preferred: readonly string[] = []): KernelInfo[] {
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  const wanted = query.trim().toLowerCase();
  const found = [...CATALOGUE.values()].filter(
    (k) =>
      k.named && words.every((w) => `${k.name} ${k.doc} ${k.family}`.toLowerCase().includes(w)),
  );
  const rank = (k: KernelInfo): number => {
    const name = k.name.toLowerCase();
    if (wanted && (name === wanted || name === `op:${wanted}`)) return 0;
    if (preferred.includes(k.name)) return 1;
    if (wanted && (name.startsWith(wanted) || name.startsWith(`op:${wanted}`))) return 2;
    return 3;
  };
  return found
    .map((k, i) => ({ k, i, r: rank(k) }))
    .sort((a, b) => a.r - b.r || a.i - b.i)
    .map(({ k }) => k);
}
