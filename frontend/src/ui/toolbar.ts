// The toolbar above the canvas: connection, version, issue count, Run button and run status,
// plus the list of issues. It renders the state; the Run button calls back into main.

import type { EditorState } from "../model/state";

export interface Toolbar {
  element: HTMLElement;
  update(state: EditorState): void;
}

function el<K extends keyof HTMLElementTagNameMap>(tag: K, className: string, text = ""): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  node.className = className;
  node.textContent = text;
  return node;
}

interface OutputSummary {
  label: string;
  shape: number[];
  dtype: string;
  sum?: number | string;
}

/** One line about a finished run's outputs: label, shape and sum of each (at most three). */
export function describeOutputs(result: Record<string, unknown>): string {
  const outputs = (result.outputs as OutputSummary[] | undefined) ?? [];
  const shown = outputs.slice(0, 3).map((o) => {
    const shape = o.shape.length ? o.shape.join("×") : "scalar";
    const sum = typeof o.sum === "number" ? `, sum ${Number(o.sum.toPrecision(6))}` : "";
    return `${o.label} ${shape} ${o.dtype}${sum}`;
  });
  const more = outputs.length > 3 ? ` and ${outputs.length - 3} more` : "";
  return shown.length ? `outputs: ${shown.join("; ")}${more}` : "";
}

export function createToolbar(onRun: () => void): Toolbar {
  const element = el("div", "geon-toolbar");
  const connection = el("span", "geon-connection");
  const version = el("span", "geon-version");
  const issues = el("span", "geon-issues");
  const run = el("button", "geon-run primary", "Run");
  const status = el("span", "geon-run-status");
  const result = el("span", "geon-run-result");
  const list = el("ul", "geon-issue-list");
  run.type = "button";
  run.addEventListener("click", onRun);
  element.append(connection, version, issues, run, status, result, list);
  return {
    element,
    update(state: EditorState): void {
      connection.textContent = state.connection === "open" ? "live" : state.connection;
      connection.dataset.state = state.connection;
      version.textContent = state.version === null ? "version …" : `version ${state.version}`;
      const n = state.issues.length;
      issues.textContent = state.version === null ? "" : n === 1 ? "1 issue" : `${n} issues`;
      issues.dataset.count = String(n);
      run.disabled = state.document === null || state.run?.status === "queued" || state.run?.status === "running";
      const r = state.run;
      status.textContent = state.message || (r ? `run ${r.id}: ${r.status}${r.status === "running" ? ` ${Math.round(r.progress * 100)}%` : ""}${r.error ? ` — ${r.error}` : ""}` : "");
      status.dataset.status = r?.status ?? "";
      result.textContent = r?.status === "done" ? describeOutputs(r.result) : "";
      list.replaceChildren(
        ...state.issues.map((i) => el("li", `geon-issue ${i.severity}`, `${i.constraint}: ${i.message}`)),
      );
    },
  };
}
