// The Puzzle panel (issue 19, item 4): when the editor opens a puzzle's graph (``?puzzle=<key>``,
// from /learn/), the puzzle shows at the top of the left side: what to build, the kernels
// allowed, and Check, which has a worker run the graph against the hidden reference on 50 random
// draws of the axis lengths; the answer is "solved" or the first difference, in axis names. On a
// try page (no account, teach/tryout.ts) Check sends the shown document instead of the graph.

import "./lesson.css";
import { answerAs, ApiError, json, RestClient } from "../api/client";

const puzzleOf = answerAs<Puzzle>();
const attemptOf = answerAs<Attempt>();
import { button, el } from "./dom";
import { LessonsApi, loadAfter } from "./lesson";
import { renderMarkdown } from "./markdown";
import type { LoomDocument } from "../model/document";
import type { TriedWork } from "../teach/tryout";

export interface Puzzle {
  key: string;
  title: string;
  description: string;
  allowedKernels: string[];
  /** Warnings the puzzle asks for, not shown as mistakes inside it (issue 36). */
  quietConstraints?: string[];
  inputs?: Record<string, { axes: string[]; dtype: string }>;
}

export interface Attempt {
  id: number;
  /** A visitor's check is read back by this key (empty for a signed-in person's). */
  key: string;
  status: "queued" | "done" | "failed";
  solved: boolean;
  result: { solved?: boolean; draws?: number; counterexample?: Counterexample };
  error: string;
}

/** A tensor of a counterexample: its axes and its values, nested in that order (null when it
 * was too large to send; geon.learn.content.puzzles.SHOWN_CELLS). */
export interface Shown {
  axes: string[];
  values: unknown;
}

/** The first failing draw (issue 36): the inputs by label, what the graph produced, what was
 * expected. A failure before any draw (a kernel not allowed) has only axes and message. */
export interface Counterexample {
  axes: Record<string, number>;
  message: string;
  inputs?: Record<string, Shown>;
  got?: Shown | null;
  expected?: Shown;
}

/** One tensor as tables a person reads the way NumPy prints it: the last axis along the
 * columns, the one before along the rows, each labelled ``name=index``; more axes make one
 * table per leading index (at most 8). */
export function gridTables(
  shown: Shown,
): { title: string; cols: string[]; rows: { label: string; cells: string[] }[] }[] {
  const { axes, values } = shown;
  if (values === null || values === undefined) return [];
  const cell = (v: unknown): string =>
    typeof v === "number"
      ? String(Number.isInteger(v) ? v.toFixed(1) : +v.toPrecision(6))
      : String(v);
  if (axes.length === 0)
    return [{ title: "", cols: [""], rows: [{ label: "", cells: [cell(values)] }] }];
  let slices: { title: string; part: unknown }[] = [{ title: "", part: values }];
  for (const name of axes.slice(0, -2)) {
    slices = slices
      .flatMap(({ title, part }) =>
        Array.isArray(part)
          ? part.map((p, i) => ({ title: `${title}${name}=${i} `, part: p }))
          : [],
      )
      .slice(0, 8);
  }
  const last = axes[axes.length - 1];
  return slices.map(({ title, part }) => {
    const rows =
      axes.length === 1
        ? [{ label: "", cells: (part as unknown[]).map(cell) }]
        : (part as unknown[][]).map((r, i) => ({
            label: `${axes[axes.length - 2]}=${i}`,
            cells: r.map(cell),
          }));
    const width = Math.max(0, ...rows.map((r) => r.cells.length));
    return {
      title: title.trim(),
      cols: Array.from({ length: width }, (_, j) => `${last}=${j}`),
      rows,
    };
  });
}

/** What a counterexample shows, captioned: each input, then the graph's result and the
 * expected one (none for a check that failed before any draw). */
export function counterexampleParts(c: Counterexample): [string, Shown][] {
  const shown: [string, Shown | null | undefined][] = [
    ...Object.entries(c.inputs ?? {}).map(([label, t]): [string, Shown] => [`input ${label}`, t]),
    ["your result", c.got],
    ["expected", c.expected],
  ];
  return shown.filter((s): s is [string, Shown] => !!s[1]);
}

/** The counterexample's grids (the page's DOM), with "Load into a run" when ``load`` is given. */
export function counterexampleView(c: Counterexample, load?: () => string): HTMLElement | null {
  const parts = counterexampleParts(c);
  if (parts.length === 0) return null;
  const box = el("div", { class: "geon-counterexample", "aria-label": "counterexample" });
  if (load && c.inputs) {
    const said = el("p", { class: "small geon-counterexample-said", role: "status" });
    const go = button(
      "Load into a run",
      "Set the axes to this draw's lengths (one undoable edit) and put its inputs in the Run panel",
      () => (said.textContent = load()),
      "geon-counterexample-load",
    );
    box.append(el("div", { class: "geon-counterexample-run" }, go, said));
  }
  for (const [caption, t] of parts) {
    const one = el(
      "div",
      { class: "geon-grid-of", "data-grid": caption },
      el("strong", { text: caption }),
      el("span", { class: "muted", text: ` (${t.axes.join(", ")})` }),
    );
    const tables = gridTables(t);
    if (tables.length === 0) one.append(el("p", { class: "muted", text: "too large to show" }));
    for (const table of tables) {
      const head = el(
        "tr",
        {},
        el("th", { text: "" }),
        ...table.cols.map((c) => el("th", { text: c })),
      );
      const body = table.rows.map((r) =>
        el("tr", {}, el("th", { text: r.label }), ...r.cells.map((v) => el("td", { text: v }))),
      );
      one.append(
        el(
          "table",
          { class: "geon-grid" },
          ...(table.title ? [el("caption", { text: table.title })] : []),
          head,
          ...body,
        ),
      );
    }
    box.append(one);
  }
  return box;
}

export class PuzzlesApi extends RestClient {
  puzzle(key: string): Promise<Puzzle> {
    return puzzleOf(this.api.GET("/api/v1/puzzles/{key}", { params: { path: { key } } }));
  }

  attempt(key: string, graph: string): Promise<Attempt> {
    return attemptOf(
      this.api.POST("/api/v1/puzzles/{key}/attempts", {
        params: { path: { key } },
        body: { graph },
      }),
    );
  }

  get(id: number): Promise<Attempt> {
    return attemptOf(
      this.api.GET("/api/v1/puzzles/attempts/{attempt_id}", {
        params: { path: { attempt_id: id } },
      }),
    );
  }

  /** Have a worker check a document this browser keeps (no account needed). */
  tryDocument(key: string, document: LoomDocument): Promise<Attempt> {
    return attemptOf(
      this.api.POST("/api/v1/puzzles/{key}/tries", {
        params: { path: { key } },
        body: { document: json(document) },
      }),
    );
  }

  /** The attempt as the worker left it (a visitor's by its key, a person's by its id). */
  again(a: Attempt): Promise<Attempt> {
    return a.key
      ? attemptOf(
          this.api.GET("/api/v1/puzzles/tries/{try_key}", { params: { path: { try_key: a.key } } }),
        )
      : this.get(a.id);
  }
}

/** What a finished attempt says to the student. */
export function verdict(a: Attempt): { solved: boolean; text: string } {
  if (a.status === "failed") return { solved: false, text: `The check could not run: ${a.error}` };
  if (a.solved)
    return {
      solved: true,
      text: `Solved: your graph matches the reference on all ${a.result.draws ?? 0} draws.`,
    };
  const c = a.result.counterexample;
  if (!c) return { solved: false, text: "Not solved yet." };
  // a draw's message names its lengths itself ("with H=1, W=3: at (H=0) you get …")
  return {
    solved: false,
    text: `Not yet. ${c.message.charAt(0).toUpperCase()}${c.message.slice(1)}`,
  };
}

export interface PuzzleOptions {
  graphId: string;
  csrf: string;
  /** On a try page: the puzzle's key and the document to check (no graph is stored). */
  tryout?: TriedWork;
  /** Told the puzzle once it is read: the editor then hides the warnings it asks for
   * (``quietConstraints``) and its operation picker lists the allowed kernels first. */
  opened?: (puzzle: Puzzle) => void;
  /** "Load into a run": replay a counterexample's draw in the Run panel; says what it did. */
  loadRun?: (c: Counterexample, dtypes: Record<string, string>) => string;
}

/** Mount the panel when the page's URL (or try page) names a puzzle; returns null otherwise. */
export async function mountPuzzle(
  options: PuzzleOptions,
  wait = (ms: number) => new Promise((r) => setTimeout(r, ms)),
): Promise<HTMLElement | null> {
  const { graphId, csrf, tryout, opened, loadRun } = options;
  const key = tryout?.key ?? new URLSearchParams(location.search).get("puzzle");
  if (!key) return null;
  const api = new PuzzlesApi(csrf);
  const element = el("section", {
    class: "geon-panel geon-lesson geon-puzzle",
    "aria-label": "puzzle",
  });
  document.querySelector(".geon-left")?.prepend(element);
  const result = el("p", { class: "geon-lesson-result", role: "status" });
  const grids = el("div", { class: "geon-puzzle-grids" });
  let tries = 0;
  try {
    const puzzle = await api.puzzle(key);
    opened?.(puzzle);
    const text = el("div", { class: "geon-lesson-text markdown" });
    text.innerHTML = renderMarkdown(puzzle.description);
    const count = el("p", { class: "geon-puzzle-tries muted small" });
    const check = button(
      "Check",
      "A worker runs your graph against the reference on 50 random draws",
      () => void run(),
      "primary geon-puzzle-check",
    );
    const run = async (): Promise<void> => {
      check.disabled = true;
      result.className = "geon-lesson-result";
      result.textContent = "Checking on 50 draws…";
      try {
        const shown = tryout?.document();
        let a = shown ? await api.tryDocument(key, shown) : await api.attempt(key, graphId);
        for (let i = 0; a.status === "queued" && i < 120; i++) {
          await wait(500);
          a = await api.again(a);
        }
        const said =
          a.status === "queued"
            ? { solved: false, text: "The worker has not answered yet; try again in a moment." }
            : verdict(a);
        result.textContent = said.text;
        result.className = `geon-lesson-result ${said.solved ? "passed" : "failed"}`;
        // solved in a class: its next item and the way back to it (signed in only)
        if (said.solved && !tryout && !element.querySelector(".geon-after")) {
          const links = await loadAfter(new LessonsApi(csrf), "puzzle", key);
          if (links.length)
            element.append(el("div", { class: "geon-lesson-nav geon-after" }, ...links));
        }
        grids.replaceChildren();
        const c = a.status === "done" && !a.solved ? a.result.counterexample : undefined;
        const dtypes = Object.fromEntries(
          Object.entries(puzzle.inputs ?? {}).map(([label, spec]) => [label, spec.dtype]),
        );
        const view = c
          ? counterexampleView(c, loadRun && !tryout ? () => loadRun(c, dtypes) : undefined)
          : null;
        if (view) grids.append(view);
        count.textContent = `${++tries} ${tries === 1 ? "check" : "checks"} in this visit`;
      } catch (e) {
        result.textContent = e instanceof ApiError ? e.message : String(e);
        result.className = "geon-lesson-result failed";
      }
      check.disabled = false;
    };
    element.append(
      el("h2", { text: "Puzzle" }),
      el("h3", { class: "geon-lesson-title", text: puzzle.title }),
      text,
      el("p", {
        class: "muted small",
        text: `Kernels you may use: ${puzzle.allowedKernels.join(", ")}`,
      }),
      check,
      result,
      grids,
      count,
      el("div", { class: "geon-lesson-nav" }, el("a", { href: "/learn/", text: "All puzzles" })),
    );
  } catch (e) {
    element.append(
      el("p", {
        class: "geon-form-error",
        role: "alert",
        text: e instanceof ApiError ? e.message : String(e),
      }),
    );
  }
  return element;
}
