// The shards panel of a selected operation: split it (along an index axis into k parts, by chunk
// size, or as a grid), its applications with their ranges, and how their output ranges cover each
// output tensor, drawn as a map: each application's block, gaps hatched red, overlaps orange.

import {
  nodeById,
  OPERATION,
  tensorAxes,
  tensorRange,
  type Issue,
  type LoomDocument,
  type Range,
} from "../model/document";
import { namedMessage } from "../model/issues";
import {
  applicationsOf,
  coverage,
  coverOf,
  indexAxesOf,
  showRange,
  type ApplicationView,
} from "../model/shards";
import type { ShardRequest } from "../sync/controller";
import type { LivePlanCost } from "../sync/protocol";
import { button, el, submit } from "./dom";
import { hatch } from "./draw";
import { createPlansSection, type PlansOptions } from "./plans";

export interface ShardsCallbacks {
  /** Send the websocket ``shard`` op; why not, or null. */
  shard(request: ShardRequest): string | null;
  removeApplication(id: string): void;
  select(id: string): void;
  /** The graph's shard plans under the operation's shards (absent: no plans section). */
  plans?: PlansOptions;
}

const COVERAGE_CONSTRAINT = "ApplicationOutputRangeCoverageIsExact";
const FILLS = ["#dbeafe", "#dcfce7", "#fef9c3", "#f3e8ff", "#e0f2fe", "#fce7f3"];

/** Parse "H=2, W=3" into a grid; throws with the bad part named. */
export function parseGrid(text: string, axes: string[]): Record<string, number> {
  const grid: Record<string, number> = {};
  for (const part of text
    .split(",")
    .map((p) => p.trim())
    .filter(Boolean)) {
    const m = /^([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(\d+)$/.exec(part);
    if (!m)
      throw new Error(`grid part "${part}" is not AXIS=PARTS; expected e.g. "${axes[0] ?? "H"}=2"`);
    if (!axes.includes(m[1]!))
      throw new Error(
        `grid axis "${m[1]}" is not an index axis of the operation; expected one of ${axes.join(", ")}`,
      );
    grid[m[1]!] = Number(m[2]);
  }
  if (!Object.keys(grid).length)
    throw new Error(`the grid is empty; expected e.g. "${axes[0] ?? "H"}=2"`);
  return grid;
}

/** A range as the maps read it (``Range`` and ``ZRange`` both are one). */
type Extent = { readonly start: readonly number[]; readonly end: readonly number[] };

/** The two dimensions a map shows: those the ranges cut first, then the others in order. */
export function mapDims(range: Extent, boxes: readonly Extent[]): number[] {
  const rank = range.start.length;
  const cut = (d: number) =>
    boxes.some((b) => b.start[d] !== range.start[d] || b.end[d] !== range.end[d]);
  const dims = Array.from({ length: rank }, (_, d) => d);
  return [...dims.filter(cut), ...dims.filter((d) => !cut(d))].slice(0, 2).sort((a, b) => a - b);
}

interface MapInput {
  range: Range;
  boxes: Range[];
  /** Drawn hatched red (unwritten outputs) or grey (unread inputs). */
  gaps: Range[];
  gapColor: string;
  overlaps: Range[];
}

function drawMap(canvas: HTMLCanvasElement, m: MapInput, dims: number[]): void {
  const ctx = canvas.getContext("2d");
  if (!ctx) return;
  // rows are the first shown dim, columns the second (one shown dim is one row)
  const [dr, dc] = dims.length === 2 ? [dims[0]!, dims[1]!] : [-1, dims[0] ?? -1];
  const span = (r: Range, d: number): [number, number] =>
    d < 0 ? [0, 1] : [r.start[d]!, r.end[d]!];
  const [r0, r1] = span(m.range, dr);
  const [c0, c1] = span(m.range, dc);
  const rows = Math.max(1, r1 - r0);
  const cols = Math.max(1, c1 - c0);
  const W = canvas.width;
  const H = canvas.height;
  const cw = W / cols;
  const ch = H / rows;
  const rect = (r: Range): [number, number, number, number] => {
    const [a0, a1] = span(r, dr);
    const [b0, b1] = span(r, dc);
    return [(b0 - c0) * cw, (a0 - r0) * ch, (b1 - b0) * cw, (a1 - a0) * ch];
  };
  ctx.clearRect(0, 0, W, H);
  ctx.fillStyle = "#f8fafc";
  ctx.fillRect(0, 0, W, H);
  m.boxes.forEach((b, i) => {
    ctx.fillStyle = FILLS[i % FILLS.length]!;
    ctx.fillRect(...rect(b));
  });
  ctx.strokeStyle = "rgba(100,116,139,0.25)";
  ctx.lineWidth = 1;
  if (cols <= 64) for (let i = 1; i < cols; i++) ctx.strokeRect(i * cw, 0, 0, H);
  if (rows <= 64) for (let i = 1; i < rows; i++) ctx.strokeRect(0, i * ch, W, 0);
  m.boxes.forEach((b) => {
    ctx.strokeStyle = "#334155";
    ctx.lineWidth = 2;
    const [x, y, w2, h2] = rect(b);
    ctx.strokeRect(x + 1, y + 1, w2 - 2, h2 - 2);
  });
  for (const o of m.overlaps) {
    ctx.fillStyle = "rgba(234,88,12,0.45)";
    ctx.fillRect(...rect(o));
  }
  for (const g of m.gaps) {
    const [x, y, w2, h2] = rect(g);
    hatch(ctx, [x, y, w2, h2], m.gapColor, 2, 8);
    ctx.strokeStyle = m.gapColor;
    ctx.strokeRect(x + 1, y + 1, w2 - 2, h2 - 2);
  }
}

/** A map with the axis names of its rows (left) and columns (top). */
function figure(
  m: MapInput,
  axes: string[] | null,
  caption: string,
  cls: string,
  tensorId: string,
): HTMLElement {
  const dims = mapDims(m.range, m.boxes);
  const canvas = el("canvas", {
    class: "geon-coverage-map",
    width: "220",
    height: "110",
    "data-tensor": tensorId,
  });
  drawMap(canvas, m, dims);
  const name = (d: number | undefined) => (d === undefined ? "" : (axes?.[d] ?? `dim ${d}`));
  const top = dims.length === 2 ? name(dims[1]) : name(dims[0]);
  const left = dims.length === 2 ? name(dims[0]) : "";
  return el(
    "figure",
    { class: `geon-coverage ${cls}`, "data-tensor": tensorId },
    el("span", { class: "geon-map-axis top", text: top }),
    el(
      "div",
      { class: "geon-map-row" },
      el("span", { class: "geon-map-axis left", text: left }),
      canvas,
    ),
    el("figcaption", { class: "small geon-coverage-text", text: caption }),
  );
}

function readMaps(doc: LoomDocument, apps: ApplicationView[]): HTMLElement[] {
  const nodes = nodeById(doc);
  const tensors = [...new Set(apps.flatMap((a) => a.inputs.map((i) => i.tensorId)))];
  return tensors.flatMap((tid) => {
    const range = tensorRange(nodes.get(tid));
    if (!range) return [];
    const boxes = apps.flatMap((a) =>
      a.inputs.filter((i) => i.tensorId === tid).map((i) => i.range),
    );
    const { gaps, overlaps } = coverOf(range, boxes);
    const label = nodes.get(tid)?.label ?? tid.slice(0, 8);
    const whole =
      boxes.length === apps.length &&
      overlaps.length === 1 &&
      showRange(overlaps[0]!) === showRange(range);
    const halo = overlaps.length > 0 && !whole;
    const caption = whole
      ? `${label}: read whole by every application`
      : halo
        ? `${label}: halo ${overlaps.map((o) => `×${o.count} ${showRange(o)}`).join("; ")}`
        : `${label}: no halo`;
    return [
      figure(
        { range, boxes, gaps, gapColor: "#94a3b8", overlaps: halo ? overlaps : [] },
        tensorAxes(nodes.get(tid)),
        caption,
        halo ? "halo" : "reads",
        tid,
      ),
    ];
  });
}

export interface ShardsPanel {
  element: HTMLElement;
  update(
    doc: LoomDocument | null,
    selected: string[],
    issues: Issue[],
    version?: number | null,
  ): void;
  /** Load the graph's plans again (someone changed them). */
  reloadPlans(): void;
  /** The collectives of the current plan that an ``applied`` carried: label the edges now. */
  livePlanCost(cost: LivePlanCost): void;
}

export function createShardsPanel(cb: ShardsCallbacks): ShardsPanel {
  const body = el("div", { class: "geon-shards-body" });
  // the selected operation's shards, then the graph's plans (shown whenever a graph is open)
  const element = el(
    "section",
    { class: "geon-panel geon-shards", "aria-label": "shards", hidden: "" },
    el("h2", { text: "Shards" }),
    body,
  );
  const plans = cb.plans ? createPlansSection(cb.plans) : null;
  const wrap = el("div", { class: "geon-shards-wrap" }, element, ...(plans ? [plans.element] : []));
  let key = "";
  return {
    element: wrap,
    reloadPlans() {
      plans?.reload();
    },
    livePlanCost(cost) {
      plans?.livePlanCost(cost);
    },
    update(doc, selected, issues, version = null) {
      plans?.update(doc, version);
      const op = doc && selected.length === 1 ? nodeById(doc).get(selected[0]!) : undefined;
      if (!doc || !op || op.type !== OPERATION) {
        element.hidden = true;
        key = "";
        return;
      }
      const apps = applicationsOf(doc, op.id);
      const covIssues = issues.filter(
        (i) => i.constraint === COVERAGE_CONSTRAINT && i.nodeIds.includes(op.id),
      );
      const k = JSON.stringify([op.id, apps, covIssues.map((i) => i.message), doc.nodes.length]);
      element.hidden = false;
      if (k === key) return;
      key = k;
      const axes = indexAxesOf(doc, op.id);
      const message = el("p", { class: "geon-form-error", role: "alert" });
      const axis = el("select", { "aria-label": "shard axis", class: "geon-shard-axis" });
      for (const a of axes) axis.append(el("option", { value: a, text: a }));
      const mode = el("select", { "aria-label": "shard by", class: "geon-shard-mode" });
      for (const [v, t] of [
        ["parts", "parts"],
        ["chunk", "chunk size"],
        ["grid", "grid"],
      ] as const)
        mode.append(el("option", { value: v, text: t }));
      const amount = el("input", {
        value: "2",
        "aria-label": "shard amount",
        class: "geon-shard-amount",
        size: "6",
      });
      const form = el(
        "form",
        { class: "geon-shard-form" },
        el("span", { class: "small", text: "Split" }),
        axis,
        mode,
        amount,
        submit(
          "Split",
          "Replace the applications by one per shard (Enter)",
          "primary geon-shard-apply",
        ),
      );
      const sync = (): void => {
        axis.disabled = mode.value === "grid";
        amount.placeholder =
          mode.value === "grid" ? `${axes[0] ?? "H"}=2, ${axes[1] ?? "N"}=2` : "2";
      };
      mode.addEventListener("change", () => {
        if (mode.value === "grid" && /^\d+$/.test(amount.value.trim()))
          amount.value = axes
            .slice(0, 2)
            .map((a) => `${a}=2`)
            .join(", ");
        else if (mode.value !== "grid" && !/^\d+$/.test(amount.value.trim())) amount.value = "2";
        sync();
      });
      sync();
      form.addEventListener("submit", (e) => {
        e.preventDefault();
        const req: ShardRequest = { operation: op.id };
        try {
          if (mode.value === "grid") req.grid = parseGrid(amount.value, axes);
          else {
            const n = Number(amount.value.trim());
            if (!Number.isInteger(n) || n < 1)
              throw new Error(
                `${mode.value === "parts" ? "parts" : "chunk size"} "${amount.value}" is not a whole number of at least 1`,
              );
            req.dim = axis.value;
            if (mode.value === "parts") req.parts = n;
            else req.chunk = n;
          }
        } catch (err) {
          message.textContent = (err as Error).message;
          return;
        }
        message.textContent = cb.shard(req) ?? "";
      });
      const nodes = nodeById(doc);
      const list = el(
        "ol",
        { class: "geon-app-list" },
        ...apps.map((a, i) => {
          const outs = a.outputs.map((o) => showRange(o.range)).join(" ");
          const item = el(
            "li",
            { class: "geon-app", "data-app": a.id },
            el("span", {
              class: "geon-app-swatch",
              style: `background:${FILLS[i % FILLS.length]}`,
            }),
            el("span", {
              class: "geon-app-index",
              text: a.index ? `${axes.join(", ")} ${showRange(a.index)}` : "no index range",
            }),
            el("span", { class: "geon-app-out muted small", text: `→ ${outs}` }),
            button(
              "×",
              "Remove this application",
              () => cb.removeApplication(a.id),
              "geon-app-remove",
            ),
          );
          return item;
        }),
      );
      const maps = coverage(doc, op.id).map((cov) => {
        const label = nodes.get(cov.tensorId)?.label ?? cov.tensorId.slice(0, 8);
        const exact = !cov.gaps.length && !cov.overlaps.length;
        const text = exact
          ? `${label}: covered exactly`
          : [
              ...cov.gaps.map((g) => `gap ${showRange(g)}`),
              ...cov.overlaps.map((o) => `overlap ×${o.count} ${showRange(o)}`),
            ].join("; ");
        const m = {
          range: cov.range,
          boxes: cov.written.map((w) => w.range),
          gaps: cov.gaps,
          gapColor: "#dc2626",
          overlaps: cov.overlaps,
        };
        return figure(
          m,
          tensorAxes(nodes.get(cov.tensorId)),
          exact ? text : `${label}: ${text}`,
          exact ? "output exact" : "output broken",
          cov.tensorId,
        );
      });
      // what each application reads: overlapping reads are the halos, cells nobody reads are grey
      const reads = apps.length > 1 ? readMaps(doc, apps) : [];
      const server = covIssues.map((i) =>
        el("p", { class: "geon-coverage-issue small", text: namedMessage(i.message, nodes) }),
      );
      body.replaceChildren(
        form,
        message,
        apps.length
          ? el("p", {
              class: "small muted",
              text: `${apps.length} application${apps.length === 1 ? "" : "s"}`,
            })
          : el("p", {
              class: "small muted",
              text: "Runs whole (no applications). Split it to shard it.",
            }),
        list,
        ...maps,
        ...server,
        ...(reads.length ? [el("h3", { class: "geon-shards-sub", text: "Reads" }), ...reads] : []),
      );
    },
  };
}
