/**
 * A plan's device ledger as the Plans panel shows it (issue 16 items 5 and 7): a one-line
 * summary (collectives, step time as an interval, peak memory and its imbalance), the collectives
 * on the plan's edges, and per device its compute and communication time and its peak memory as a
 * bar split into parameters, gradients, optimizer state, activations, temporaries and
 * communication buffers (a training step's ledger, issue 32), against the profile's
 * capacity. The current plan's ledger is shown as soon as its cost arrives; compared plans show
 * theirs under the comparison.
 */

import {
  showBytes,
  showSeconds,
  type Collective,
  type LedgerRow,
  type MemoryParts,
  type ProfiledCost,
} from "../model/costs";
import { el } from "./dom";

/** The parts of a device's peak, in the order they are drawn, with the words a person reads. */
export const PARTS: readonly [keyof MemoryParts, string][] = [
  ["parameters", "parameters"],
  ["gradients", "gradients"],
  ["optimizer", "optimizer state"],
  ["activations", "activations"],
  ["temporaries", "temporaries"],
  ["communication", "communication buffers"],
];

/** Below this share of the capacity, bars are drawn against the busiest device instead, so a
 * small graph's bars are not all empty; the caption says which scale is used. */
export const CAPACITY_SCALE_FROM = 0.05;

/** The bytes a full bar stands for: the capacity when some device uses a visible share of it (or
 * more), else the busiest device's peak. */
export function barScale(
  peaks: readonly number[],
  capacity: number,
): { bytes: number; capacity: boolean } {
  const most = Math.max(0, ...peaks);
  if (Number.isFinite(capacity) && capacity > 0 && most >= CAPACITY_SCALE_FROM * capacity)
    return { bytes: Math.max(capacity, most), capacity: true };
  return { bytes: most, capacity: false };
}

/** The one-line summary of a plan's cost: "Megatron: 2 collectives · 85–103 µs per step · peak
 * 3.8 KiB per device (max vs mean +12%)", with ", over memory" when a device is over capacity. */
export function ledgerSummary(plan: string, cost: Partial<ProfiledCost>): string {
  const n = cost.collectives?.length ?? 0;
  const parts = [`${plan}: ${n} collective${n === 1 ? "" : "s"}`];
  if (cost.time) {
    const { lower, upper } = cost.time;
    parts.push(
      lower === upper
        ? `${showSeconds(upper)} per step`
        : `${showSeconds(lower)}–${showSeconds(upper)} per step`,
    );
  }
  const peaks = (cost.ledger ?? []).map((d) => d.peakBytes);
  if (peaks.length) {
    const imbalance = cost.memory?.imbalancePercent ?? 0;
    parts.push(
      `peak ${showBytes(Math.max(...peaks))} per device${peaks.length > 1 ? ` (max vs mean +${Math.round(imbalance)}%)` : ""}`,
    );
  }
  return parts.join(" · ") + (cost.memory?.overBudget ? ", over memory" : "");
}

/** A device's peak as words: "3.8 KiB: parameters 2 KiB, temporaries 1.8 KiB". */
export function peakWords(d: LedgerRow): string {
  const split = PARTS.filter(([key]) => (d.memory?.[key] ?? 0) > 0).map(
    ([key, words]) => `${words} ${showBytes(d.memory![key])}`,
  );
  return split.length ? `${showBytes(d.peakBytes)}: ${split.join(", ")}` : showBytes(d.peakBytes);
}

/** A ledger row's device: "(0, 1)", or for equal devices grouped by the server "(0, 1) ×4,096". */
export function deviceLabel(d: LedgerRow): string {
  const coords = `(${d.coords.join(", ")})`;
  return d.count && d.count > 1 ? `${coords} ×${d.count.toLocaleString("en")}` : coords;
}

function grouped(d: LedgerRow): string {
  const listed = (d.devices ?? []).map((c) => `(${c.join(", ")})`);
  const more = (d.count ?? listed.length) - listed.length;
  return `${d.count!.toLocaleString("en")} devices alike: ${listed.join(" ")}${more > 0 ? ` and ${more.toLocaleString("en")} more` : ""}`;
}

/** A collective's row; with ``showEdge`` a click (or Enter) pans the canvas to its edge and highlights it (issue 35). */
function collectiveItem(
  c: Collective,
  showEdge?: (tensor: string, consumer: string) => void,
): HTMLElement {
  const link: Record<string, string> = showEdge
    ? {
        class: "geon-collective geon-edge-link",
        tabindex: "0",
        title: "Show this edge on the canvas",
      }
    : { class: "geon-collective" };
  const row = el(
    "li",
    { ...link, "data-kind": c.kind },
    el("span", {
      class: "geon-collective-what",
      text: `${c.kind}${c.meshAxes.length ? ` over ${c.meshAxes.join(", ")}` : ""}`,
    }),
    el("span", {
      class: "geon-collective-size",
      text: `${showBytes(c.bytes)} · ${showSeconds(c.seconds)}`,
    }),
    el("span", {
      class: "geon-collective-where small muted",
      text: `${c.tensorLabel}: ${c.producerLabel} → ${c.consumerLabel}`,
    }),
  );
  row.addEventListener("click", () => showEdge?.(c.tensor, c.consumer));
  row.addEventListener("keydown", (e) => e.key === "Enter" && showEdge?.(c.tensor, c.consumer));
  return row;
}

function memoryBar(d: LedgerRow, scale: number): HTMLElement {
  const share = (bytes: number): string =>
    `${scale > 0 ? Math.min(100, (bytes / scale) * 100) : 0}%`;
  const segments = d.memory
    ? PARTS.map(([key]) =>
        el("span", {
          class: `geon-bar-part geon-bar-${key}`,
          style: `width: ${share(d.memory![key])}`,
        }),
      )
    : [
        el("span", {
          class: "geon-bar-part geon-bar-parameters",
          style: `width: ${share(d.peakBytes)}`,
        }),
      ];
  return el(
    "span",
    { class: "geon-bar", role: "img", "aria-label": `peak ${peakWords(d)}`, title: peakWords(d) },
    ...segments,
  );
}

/** The ledger of one plan: a `<details>` whose summary is {@link ledgerSummary}. */
export function renderLedger(
  plan: string,
  cost: Partial<ProfiledCost>,
  open = false,
  showEdge?: (tensor: string, consumer: string) => void,
): HTMLElement {
  const capacity = cost.memory?.capacity ?? Infinity;
  const rows = cost.ledger ?? [];
  const scale = barScale(
    rows.map((d) => d.peakBytes),
    capacity,
  );
  const head = el(
    "thead",
    {},
    el(
      "tr",
      {},
      ...["device", "compute", "comm.", "peak"].map((n) => el("th", { scope: "col", text: n })),
    ),
  );
  const devices = rows.map((d) =>
    el(
      "tr",
      { class: `geon-ledger-row${d.overBudget ? " over" : ""}` },
      el("th", {
        scope: "row",
        text: deviceLabel(d),
        ...(d.count && d.count > 1 ? { title: grouped(d) } : {}),
      }),
      el("td", { text: showSeconds(d.computeSeconds) }),
      el("td", { text: showSeconds(d.commSeconds) }),
      el(
        "td",
        {
          class: "geon-ledger-peak",
          ...(d.overBudget ? { title: `over the device's ${showBytes(capacity)}` } : {}),
        },
        showBytes(d.peakBytes),
        memoryBar(d, scale.bytes),
      ),
    ),
  );
  const profile = cost.profile?.name ?? "the default profile";
  const caption = scale.capacity
    ? `Per device on ${profile}; bars to the device's memory, ${showBytes(capacity)}`
    : `Per device on ${profile}; bars to the busiest device (${Number.isFinite(capacity) ? `each has ${showBytes(capacity)}` : "no capacity given"})`;
  const left = cost.omitted?.ledger ?? 0;
  const notListed = left
    ? [
        el("p", {
          class: "small muted geon-ledger-omitted",
          text: `${left.toLocaleString("en")} more devices not listed (the busiest are)`,
        }),
      ]
    : [];
  const legend = el(
    "p",
    { class: "geon-bar-legend small muted" },
    ...PARTS.map(([key, words]) =>
      el("span", {}, el("span", { class: `geon-bar-swatch geon-bar-${key}` }), words),
    ),
  );
  const collectives = cost.collectives ?? [];
  return el(
    "details",
    { class: "geon-ledger", "data-plan": plan, ...(open ? { open: "" } : {}) },
    el("summary", { text: ledgerSummary(plan, cost) }),
    collectives.length
      ? el(
          "ul",
          { class: "geon-collectives", "aria-label": "collectives on the plan's edges" },
          ...collectives.map((c) => collectiveItem(c, showEdge)),
        )
      : el("p", { class: "small muted", text: "No collectives: nothing moves between devices." }),
    el(
      "table",
      { class: "geon-ledger-table" },
      el("caption", { class: "small muted", text: caption }),
      head,
      el("tbody", {}, ...devices),
    ),
    ...notListed,
    legend,
  );
}
