// The run panel: run the graph logically or sharded (random inputs from a seed, or an uploaded
// .npz), follow its progress operation by operation, and look at each output: a heat map (1-D or
// 2-D; a slice picker for higher rank) with the axis names on its sides, the sharded run's
// difference from the logical one, and the results.npz download.

import type { RunInfo } from "../sync/protocol";
import { runEngines, startRun, verifyPlan } from "../sync/runs";
import type { VerifyEntry, VerifyReport } from "../sync/runs";
import { el, submit } from "./dom";
import { saveFrom } from "./download";
import { cellAt, colorBar, hoverText } from "./heatmap";

/** What a run's ``step`` says (the protocol leaves its fields open): the last operation or Application done. */
export interface RunStep {
  done?: number;
  total?: number;
  phase?: string;
  operationId?: string | null;
  applicationId?: string | null;
  kernel?: string | null;
}

export interface ResultView {
  key: string;
  shape: number[];
  dtype: string;
  axes: string[] | null;
  at: number[];
  viewShape: number[];
  limit: number;
  min: number | null;
  max: number | null;
  values: (number | null)[];
  maxAbsDiff: number | null;
}

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

function collectivesTable(collectives: unknown): HTMLElement | null {
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

/** A blue-white-red colour for ``v`` in [min, max] (white at the middle). */
export function heatColor(v: number | null, min: number, max: number): string {
  if (v === null) return "#9ca3af";
  const t = max > min ? (v - min) / (max - min) : 0.5;
  const a = Math.max(0, Math.min(1, t));
  const mix = (from: number[], to: number[], k: number) =>
    from.map((c, i) => Math.round(c + (to[i]! - c) * k));
  const rgb =
    a < 0.5
      ? mix([37, 99, 235], [248, 250, 252], a * 2)
      : mix([248, 250, 252], [220, 38, 38], (a - 0.5) * 2);
  return `rgb(${rgb.join(",")})`;
}

function drawHeat(canvas: HTMLCanvasElement, r: ResultView): void {
  const ctx = canvas.getContext("2d");
  if (!ctx) return;
  const [rows, cols] =
    r.viewShape.length === 2 ? [r.viewShape[0]!, r.viewShape[1]!] : [1, r.viewShape[0] ?? 1];
  const W = canvas.width;
  const H = canvas.height;
  const cw = W / Math.max(1, cols);
  const ch = H / Math.max(1, rows);
  const min = r.min ?? 0;
  const max = r.max ?? 0;
  for (let i = 0; i < rows; i++) {
    for (let j = 0; j < cols; j++) {
      ctx.fillStyle = heatColor(r.values[i * cols + j] ?? null, min, max);
      ctx.fillRect(j * cw, i * ch, Math.ceil(cw), Math.ceil(ch));
    }
  }
}

/** The run modes to add for the engines the server offers beyond NumPy, less those the choice already has. */
export function engineModes(
  engines: string[],
  present: string[],
): { value: string; text: string; title: string }[] {
  if (!engines.includes("jax") || present.includes("jax")) return [];
  return [
    {
      value: "jax",
      text: "jax (placed plan)",
      title: "Run the placed plan as one XLA program on JAX, checked against the logical run",
    },
  ];
}

/** How the status line names a run's mode. */
export function runMode(run: Pick<RunInfo, "sharded" | "engine">): string {
  return run.engine === "jax" ? "on jax" : run.sharded ? "sharded" : "logical";
}

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

function verifyTable(report: VerifyReport): HTMLElement {
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

export interface RunPanel {
  element: HTMLElement;
  /** Show ``run``; ``current`` is the graph's version now (a run of an older one says so). */
  update(run: RunInfo | null, current?: number | null): void;
}

/** "Download results.npz": fetched, so that results gone or refused say why in the panel (issue 35). */
function resultsLink(href: string, failed: (why: string) => void): HTMLElement {
  const a = el("a", { href, class: "geon-run-download", download: "" }, "Download results.npz");
  a.addEventListener("click", (e) => {
    e.preventDefault();
    void saveFrom(href, "results.npz", "Download of results.npz").then((why) => why && failed(why));
  });
  return a;
}

export function createRunPanel(options: {
  graphId: string;
  csrf: string;
  onRun: (run: RunInfo) => void;
  onError: (message: string) => void;
}): RunPanel {
  const mode = el("select", { "aria-label": "run mode", class: "geon-run-mode" });
  mode.append(
    el("option", { value: "logical", text: "logical" }),
    el("option", { value: "sharded", text: "sharded" }),
  );
  void runEngines((why) => {
    status.textContent = why;
  }).then((engines) => {
    for (const m of engineModes(
      engines,
      [...mode.options].map((o) => o.value),
    ))
      mode.append(el("option", m));
    if (engines.includes("jax")) verifyGo.hidden = false;
  });
  const seed = el("input", { value: "0", "aria-label": "seed", class: "geon-run-seed", size: "4" });
  const file = el("input", {
    type: "file",
    accept: ".npz",
    "aria-label": "inputs .npz",
    class: "geon-run-file",
  });
  const keep = el("input", {
    type: "checkbox",
    class: "geon-run-intermediates",
    id: "geon-run-intermediates",
  });
  const message = el("p", { class: "geon-form-error", role: "alert" });
  const form = el(
    "form",
    { class: "geon-run-form" },
    mode,
    el("label", { class: "small", text: "seed" }),
    seed,
    submit("Run", "Run on the worker (Enter)", "primary geon-run-go"),
    el("label", { class: "small geon-run-file-label", text: "inputs" }),
    file,
    el(
      "label",
      {
        class: "small geon-run-keep",
        for: "geon-run-intermediates",
        title:
          "Keep and show every tensor of the run, not only the outputs (within the run limits)",
      },
      keep,
      " keep intermediates",
    ),
  );
  const progress = el("progress", { class: "geon-run-progress", max: "1", value: "0", hidden: "" });
  const status = el("p", { class: "small geon-run-line", role: "status" });
  const outputs = el("div", { class: "geon-run-outputs" });
  const verifyGo = el(
    "button",
    {
      type: "button",
      class: "geon-verify-go",
      hidden: "",
      title:
        "Compile the placed plan with XLA in a worker and match its collectives with geon's predictions",
    },
    "Verify plan with XLA",
  );
  const verifyOut = el("div", { class: "geon-verify", role: "status" });
  const element = el(
    "section",
    { class: "geon-panel geon-run-panel", "aria-label": "run" },
    el("h2", { text: "Run" }),
    form,
    message,
    progress,
    status,
    outputs,
    verifyGo,
    verifyOut,
  );
  verifyGo.addEventListener("click", () => {
    verifyGo.setAttribute("disabled", "");
    verifyOut.replaceChildren(el("p", { class: "small", text: "compiling the plan with XLA…" }));
    const began = Date.now();
    const settle = (answer: Awaited<ReturnType<typeof verifyPlan>>): void => {
      if ("pending" in answer && Date.now() - began < 120_000) {
        setTimeout(() => void verifyPlan(answer.pending, null).then(settle), 1000);
        return;
      }
      verifyGo.removeAttribute("disabled");
      if ("report" in answer) verifyOut.replaceChildren(verifyTable(answer.report));
      else
        verifyOut.replaceChildren(
          el("p", {
            class: "small geon-form-error",
            text:
              "error" in answer ? answer.error : "no worker answered within 2 minutes; try again",
          }),
        );
    };
    void verifyPlan(`/api/v1/graphs/${options.graphId}/verify`, options.csrf).then(settle);
  });
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    message.textContent = "";
    element.scrollIntoView({ block: "nearest" });
    const typed = seed.value.trim();
    if (typed && !/^\d+$/.test(typed)) {
      message.textContent = `seed "${seed.value}" is not a whole number of at least 0`;
      return;
    }
    const chosen = file.files?.[0];
    const engine = mode.value === "jax" ? "jax" : undefined;
    void startRun(options.graphId, options.csrf, {
      sharded: mode.value === "sharded",
      seed: typed || undefined,
      inputs: chosen,
      intermediates: keep.checked,
      engine,
    }).then((answer) => {
      if ("run" in answer) options.onRun(answer.run);
      else message.textContent = answer.error;
    });
  });

  let shownRun = -1;
  let lastKey = "";
  const showOutputs = async (run: RunInfo): Promise<void> => {
    const listed = Array.isArray(run.result.outputs)
      ? (run.result.outputs as { label?: string; id?: string }[])
      : [];
    const keys = listed.map((o) => o.label ?? o.id ?? "").filter(Boolean);
    const figures: HTMLElement[] = [];
    const table = collectivesTable(run.result.collectives);
    if (table) figures.push(table);
    for (const key of keys) figures.push(await outputFigure(run, key, []));
    if (run.results) figures.push(resultsLink(run.results, (why) => (message.textContent = why)));
    outputs.replaceChildren(...figures);
    element.scrollIntoView({ block: "nearest" });
  };
  const outputFigure = async (run: RunInfo, key: string, at: number[]): Promise<HTMLElement> => {
    const url = `/api/v1/runs/${run.id}/results/${encodeURIComponent(key)}${at.length ? `?at=${at.join(",")}` : ""}`;
    const fig = el("figure", { class: "geon-result", "data-key": key });
    // a refusal, an answer that is not JSON or no answer at all: the figure says why (issue 35)
    const failed = (why: string): HTMLElement => (
      fig.append(el("figcaption", { class: "small geon-form-error", text: `${key}: ${why}` })),
      fig
    );
    let response: Response;
    let body: ResultView & { error?: { message: string } };
    try {
      response = await fetch(url, { credentials: "same-origin" });
      body = (await response.json()) as typeof body;
    } catch (e) {
      return failed(`the result could not be read (${(e as Error).message})`);
    }
    if (!response.ok)
      return failed(body.error?.message ?? `the server answered ${response.status}`);
    const rank = body.shape.length;
    const rows = body.viewShape.length === 2 ? body.viewShape[0]! : 1;
    const cols = body.viewShape.length === 2 ? body.viewShape[1]! : (body.viewShape[0] ?? 1);
    const cell = Math.max(1, Math.min(40, Math.floor(220 / Math.max(rows, cols))));
    const canvas = el("canvas", {
      class: "geon-heat",
      width: String(cols * cell),
      height: String(rows * cell),
    });
    drawHeat(canvas, body);
    const axis = (d: number) => body.axes?.[d] ?? `dim ${d}`;
    const top = rank >= 2 ? axis(rank - 1) : axis(0);
    const left = rank >= 2 ? axis(rank - 2) : "";
    const num = (v: number | null) => (v === null ? "–" : Number(v.toPrecision(4)).toString());
    const diff =
      body.maxAbsDiff === null
        ? ""
        : `${run.engine === "jax" ? "jax" : "sharded"} vs logical: max |Δ| = ${body.maxAbsDiff === 0 ? "0" : body.maxAbsDiff.toExponential(1)}`;
    const head = el(
      "figcaption",
      { class: "small geon-result-caption" },
      el("strong", { text: key }),
      ` ${body.shape.join("×")} ${body.dtype} · min ${num(body.min)} · max ${num(body.max)}`,
      ...(diff
        ? [
            el("br"),
            el("span", {
              class: `geon-result-diff ${body.maxAbsDiff !== null && body.maxAbsDiff < 1e-12 ? "ok" : "bad"}`,
              text: diff,
            }),
          ]
        : []),
    );
    const picker: HTMLElement[] = [];
    if (rank > 2) {
      const inputs = body.shape.slice(0, rank - 2).map((n, d) => {
        const input = el("input", {
          type: "number",
          min: "0",
          max: String(n - 1),
          value: String(body.at[d] ?? 0),
          "aria-label": `slice ${axis(d)}`,
          class: "geon-slice",
        });
        input.addEventListener("change", () => {
          void outputFigure(
            run,
            key,
            inputs.map((i) => Number(i.value)),
          ).then((next) => fig.replaceWith(next));
        });
        return input;
      });
      picker.push(
        el(
          "div",
          { class: "geon-slice-picker small" },
          ...body.shape
            .slice(0, rank - 2)
            .flatMap((_, d) => [el("span", { text: `${axis(d)} =` }), inputs[d]!]),
        ),
      );
    }
    // the value under the pointer, by axis name, and the colour bar
    const value = el("div", { class: "geon-heat-value small", role: "status" });
    canvas.addEventListener("mousemove", (e) => {
      const [i, j] = cellAt(
        e.offsetX,
        e.offsetY,
        canvas.clientWidth || canvas.width,
        canvas.clientHeight || canvas.height,
        rows,
        cols,
      );
      value.textContent = hoverText(
        body.axes ?? [],
        body.at,
        i,
        j,
        body.values[i * cols + j] ?? null,
      );
    });
    canvas.addEventListener("mouseleave", () => (value.textContent = ""));
    fig.append(
      head,
      ...picker,
      el("span", { class: "geon-map-axis top", text: top, style: `width:${cols * cell}px` }),
      el(
        "div",
        { class: "geon-map-row" },
        el("span", { class: "geon-map-axis left", text: left }),
        canvas,
      ),
      ...(body.min !== null && body.max !== null
        ? [colorBar(body.min, body.max, cols * cell, heatColor)]
        : []),
      value,
    );
    fig.dataset.diff = body.maxAbsDiff === null ? "" : String(body.maxAbsDiff);
    return fig;
  };

  return {
    element,
    update(run, current = null) {
      if (!run) return;
      const key = JSON.stringify([run.id, run.status, run.progress, run.step, current]);
      if (key === lastKey) return;
      lastKey = key;
      progress.hidden = false;
      progress.value = run.progress;
      const step = run.step as RunStep | null;
      const where =
        step && step.kernel
          ? ` · ${step.phase ?? ""} ${step.kernel}${step.applicationId ? " (application)" : ""} ${step.done ?? ""}/${step.total ?? ""}`
          : "";
      const plan = typeof run.planName === "string" ? ` (${run.planName})` : "";
      const stale =
        current !== null && run.version !== current
          ? ` — of version ${run.version}; the graph is at version ${current} now`
          : "";
      status.textContent = `run ${run.id} ${runMode(run)}${plan}: ${run.status}${run.status === "running" ? ` ${Math.round(run.progress * 100)}%` : ""}${where}${run.error ? ` — ${run.error}` : ""}${stale}`;
      element.classList.toggle("stale", stale !== "");
      element.dataset.status = run.status;
      if (run.status === "done" && shownRun !== run.id) {
        shownRun = run.id;
        void showOutputs(run).catch((e: unknown) => options.onError(String(e)));
      } else if (run.status !== "done") outputs.replaceChildren();
    },
  };
}
