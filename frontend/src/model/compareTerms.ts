// Compare as a decision table (issue 35): what bounds each plan's step, the busiest device's
// memory by its parts, and what the hardware profile assumes, stated beside the times.

import { showBytes, showSeconds, type LedgerRow } from "./costs";
import type { CompareRow, PlanCost } from "./plans";

/** The busiest device's (the ledger's highest peak) memory parts, one row each where either plan has the part (issue 35: one figure per device, its parts defined). */
export function memoryPartRows(
  a: PlanCost,
  b: PlanCost,
  figure: (label: string, x: number, y: number, show?: (n: number) => string) => CompareRow,
): CompareRow[] {
  const busiest = (c: PlanCost) =>
    (c.ledger ?? []).reduce<LedgerRow | null>(
      (m, d) => (m === null || d.peakBytes > m.peakBytes ? d : m),
      null,
    )?.memory;
  const [pa, pb] = [busiest(a), busiest(b)];
  if (!pa && !pb) return [];
  const parts = [
    "parameters",
    "gradients",
    "optimizer",
    "activations",
    "temporaries",
    "communication",
  ] as const;
  return parts
    .filter((k) => (pa?.[k] ?? 0) || (pb?.[k] ?? 0))
    .map((k) => figure(`of which ${k}`, pa?.[k] ?? 0, pb?.[k] ?? 0, showBytes));
}

/** What bounds a plan's step (the slowest device): "communication (1.2 ms of 1.5 ms)" or "compute (…)". */
export function dominantTerm(cost: PlanCost): string {
  const slowest = (cost.ledger ?? []).reduce<LedgerRow | null>(
    (m, d) =>
      m === null || d.computeSeconds + d.commSeconds > m.computeSeconds + m.commSeconds ? d : m,
    null,
  );
  if (!slowest) return "—";
  const total = slowest.computeSeconds + slowest.commSeconds;
  const [term, part] =
    slowest.commSeconds > slowest.computeSeconds
      ? ["communication", slowest.commSeconds]
      : ["compute", slowest.computeSeconds];
  return `${term} (${showSeconds(part)} of ${showSeconds(total)})`;
}

/** What a profile assumes, stated beside the times: "h100-sxm-8 assumes links of 450 GB/s with 2 µs latency, a 5 µs kernel floor, 80 GB per device". */
export function profileAssumptions(profile: PlanCost["profile"]): string {
  const p = profile as
    | (PlanCost["profile"] & {
        device?: { kernelFloor?: number; memory?: number };
        defaultLink?: { bandwidth?: number; latency?: number };
      })
    | undefined;
  if (!p) return "";
  const link = p.defaultLink;
  const parts = [
    ...(link?.bandwidth
      ? [
          `links of ${Number((link.bandwidth / 1e9).toFixed(1))} GB/s with ${showSeconds(link.latency ?? 0)} latency`,
        ]
      : []),
    ...(p.device?.kernelFloor ? [`a ${showSeconds(p.device.kernelFloor)} kernel floor`] : []),
    ...(p.device?.memory ? [`${Number((p.device.memory / 1e9).toFixed(1))} GB per device`] : []),
  ];
  return parts.length ? `${p.name} assumes ${parts.join(", ")}` : "";
}
