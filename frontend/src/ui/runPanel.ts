// The run panel: run the graph logically or sharded (random inputs from a seed, or an uploaded
// .npz), follow its progress operation by operation, and look at each output: a heat map (1-D or
// 2-D; a slice picker for higher rank) with the axis names on its sides, the sharded run's
// difference from the logical one, and the results.npz download.

import type { RunInfo } from "../sync/protocol";
import { runEngines, startRun, verifyPlan } from "../sync/runs";
import { el, submit } from "./dom";
import { saveFrom } from "./download";
import { cellAt, colorBar, hoverText } from "./heatmap";
import { collectivesTable } from "./runCollectives";
import { drawHeat, heatColor, type ResultView } from "./runHeat";
import { verifyTable } from "./runVerify";

/** What a run's ``step`` says (the protocol leaves its fields open): the last operation or Application done. */
export interface RunStep {
  done?: number;
  total?: number;
  phase?: string;
  operationId?: string | null;
  applicationId?: string | null;
  kernel?: string | null;
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
