// A sharded run's collectives: the cost model's predicted bytes beside the bytes the run
// measured, as rows a person reads (tensors by name) and as the run panel's table.

import { el } from "./dom";

/** One collective of a sharded run's JSON: the cost model's predicted payload beside the bytes the run measured. */
export interface RunCollective {
  kind: string;
  tensor: string;
  tensorLabel: string | null;
  producer: string;
  consumer: string;
  meshAxes: string[];
  predictedBytes: number;
  measuredBytes: number;
}

/** A table row for a person: the collective and its mesh axes, the tensor by name, both byte counts and whether they differ. */
export interface CollectiveRow {
  collective: string;
  tensor: string;
  predicted: string;
  measured: string;
  differs: boolean;
}

/** Bytes as a person reads them: B, KiB, MiB, GiB (three significant digits past 1 KiB). */
export function formatBytes(n: number): string {
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let v = n;
  let u = 0;
  while (Math.abs(v) >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return u === 0 ? `${n} B` : `${Number(v.toPrecision(3))} ${units[u]}`;
}

/** The rows of the collectives table, from a run's ``result.collectives`` (anything else: no rows). Tensors are named by label, never by id. */
export function collectiveRows(collectives: unknown): CollectiveRow[] {
  if (!Array.isArray(collectives)) return [];
  return (collectives as RunCollective[]).map((c) => ({
    collective: c.meshAxes.length ? `${c.kind} over ${c.meshAxes.join(", ")}` : c.kind,
    tensor: c.tensorLabel || "unnamed tensor",
    predicted: formatBytes(c.predictedBytes),
    measured: formatBytes(c.measuredBytes),
    differs: c.predictedBytes !== c.measuredBytes,
  }));
}

export function collectivesTable(collectives: unknown): HTMLElement | null {
  const rows = collectiveRows(collectives);
  if (!rows.length) return null;
  const head = el(
    "tr",
    {},
    ...["collective", "tensor", "predicted", "measured", ""].map((t) => el("th", { text: t })),
  );
  const body = rows.map((r) =>
    el(
      "tr",
      { class: r.differs ? "bad" : "ok", "data-differs": String(r.differs) },
      el("td", { text: r.collective }),
      el("td", { text: r.tensor }),
      el("td", { text: r.predicted }),
      el("td", { text: r.measured }),
      el("td", {
        text: r.differs ? "≠" : "=",
        title: r.differs ? "measured differs from predicted" : "measured equals predicted",
      }),
    ),
  );
  return el(
    "table",
    {
      class: "small geon-run-collectives",
      "aria-label": "collectives: predicted and measured bytes",
    },
    el("thead", {}, head),
    el("tbody", {}, ...body),
  );
}
