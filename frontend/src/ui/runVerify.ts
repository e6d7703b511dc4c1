// The verify report of a placed plan: each collective geon predicts beside the one XLA compiled
// that it matches (then those nothing predicted), as rows and as the run panel's table.

import type { VerifyEntry, VerifyReport } from "../sync/runs";
import { el } from "./dom";
import { formatBytes } from "./runCollectives";

/** One row of the verify table: the rule, the predicted collective and the compiled one it matches. */
export interface VerifyRow {
  rule: string;
  tensor: string;
  predicted: string;
  compiled: string;
  /** The edge by labels (the predicted side's), for the row's title. */
  edge: string;
  ok: boolean;
}

function bytes(e: VerifyEntry): string {
  return `${e.kind} ${formatBytes(e.bytesPerDevice)}`;
}

/** The verify report as rows (ids never shown): each predicted collective beside the compiled one it matches, then the compiled ones nothing predicted. */
export function verifyRows(report: VerifyReport): VerifyRow[] {
  const shown = new Set<number>();
  const compiledText = (c: VerifyEntry): string =>
    `${bytes(c)} ×${c.groups ?? 1}${(c.combined ?? 1) > 1 ? ` (${c.combined} in one)` : ""}`;
  const rows: VerifyRow[] = report.predicted.map((p) => {
    const c = p.match !== null ? report.compiled[p.match] : undefined;
    if (p.match !== null) shown.add(p.match);
    const edge = `${p.tensorLabel ?? "unnamed tensor"}: ${p.producerLabel ?? "?"} → ${p.consumerLabel ?? "?"}, over (${(p.meshAxes ?? []).join(", ")})`;
    return {
      rule: p.rule,
      tensor: p.tensorLabel ?? "unnamed tensor",
      predicted: `${bytes(p)} ×${p.groups ?? 1}`,
      compiled: c ? compiledText(c) : "–",
      edge,
      ok: p.rule !== "unexplained",
    };
  });
  report.compiled.forEach((c, j) => {
    if (!shown.has(j))
      rows.push({
        rule: c.rule,
        tensor: "–",
        predicted: "–",
        compiled: compiledText(c),
        edge: `compiled on ${c.devices ?? "?"} devices per group`,
        ok: c.rule !== "unexplained",
      });
  });
  return rows;
}

export function verifyTable(report: VerifyReport): HTMLElement {
  const head = el("tr", {}, ...["rule", "tensor", "geon", "XLA"].map((t) => el("th", { text: t })));
  const body = verifyRows(report).map((r) =>
    el(
      "tr",
      { class: r.ok ? "ok" : "bad", title: r.edge },
      el("td", { text: r.rule }),
      el("td", { text: r.tensor }),
      el("td", { text: r.predicted }),
      el("td", { text: r.compiled }),
    ),
  );
  const verdict = report.agrees ? "agrees" : `${report.unexplained} unexplained`;
  return el(
    "div",
    { class: "geon-verify-report" },
    el("p", {
      class: `small geon-verify-verdict ${report.agrees ? "ok" : "bad"}`,
      text: `${report.predicted.length} predicted, ${report.compiled.length} compiled on ${report.devices} devices: ${verdict}`,
    }),
    el(
      "table",
      {
        class: "small geon-run-collectives geon-verify-table",
        "aria-label": "collectives: predicted by geon and compiled by XLA",
      },
      el("thead", {}, head),
      el("tbody", {}, ...body),
    ),
  );
}
