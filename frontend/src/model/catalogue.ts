// The kernel catalogue as the server publishes it (geon.core.ops.catalogue_json()). The JSON file
// is a copy; tests/browser/test_catalogue.py fails when it drifts from the server's.

import type { KernelInfo } from "./infer/dispatch";
import data from "./catalogue.json";

export const CATALOGUE: ReadonlyMap<string, KernelInfo> = new Map((data as KernelInfo[]).map((k) => [k.name, k]));

/** Catalogue kernels whose name or doc contains every word of ``query`` (case-insensitive). */
export function searchKernels(query: string): KernelInfo[] {
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  return [...CATALOGUE.values()].filter((k) => k.named && words.every((w) => `${k.name} ${k.doc} ${k.family}`.toLowerCase().includes(w)));
}
