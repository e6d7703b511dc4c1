// The History panel of the editor (issue 21, "No history"): the graph's versions, newest first,
// each with who, when and what it did by name (the server's summary, or the author's message);
// runs of layout-only versions folded. Any version opens read-only on the diff page against the
// current one (before / after / side by side), and editors restore one as a new version (the
// server stores it and every open editor gets the new document). Opened from the toolbar's
// version ("version 26").

import "./history.css";
import { answer, answerAs, ApiError, GraphRestClient } from "../api/client";
import {
  ago,
  historyRows,
  movesLabel,
  versionText,
  type HistoryRow,
  type VersionInfo,
} from "../model/versions";
import { button, el } from "./dom";

/** ``/graphs/<id>/versions`` and the restore of one. */
export class HistoryApi extends GraphRestClient {
  async versions(): Promise<VersionInfo[]> {
    return (
      await answerAs<{ versions: VersionInfo[] }>()(
        this.api.GET("/api/v1/graphs/{graph_id}/versions", {
          params: { path: this.graph },
        }),
      )
    ).versions;
  }

  restore(number: number, baseVersion: number): Promise<{ version: number }> {
    return answer(
      this.api.POST("/api/v1/graphs/{graph_id}/versions/{number}/restore", {
        params: { path: { ...this.graph, number } },
        body: { baseVersion },
      }),
    );
  }
}

export interface HistoryPanel {
  element: HTMLDialogElement;
  open(): Promise<void>;
}

/** The page of a version read-only, compared with ``current``. */
export function diffUrl(graphId: string, number: number, current: number): string {
  return `/graphs/${graphId}/diff/${number}/${current}/`;
}

/** The History dialog; ``canEdit`` shows Restore (the server checks the role again). */
export function mountHistory(root: HTMLElement, csrf: string): HistoryPanel {
  const graphId = root.dataset.graphId ?? "";
  const canEdit = root.dataset.canEdit === "1";
  const api = new HistoryApi(csrf, graphId);
  const list = el("ol", { class: "geon-history-list", "aria-label": "versions, newest first" });
  const message = el("p", { class: "geon-history-error", role: "alert" });
  const close = button("Close", "Close (Escape)", () => element.close());
  const element = el(
    "dialog",
    { class: "geon-dialog geon-history", "aria-label": "History of this graph" },
    el("div", { class: "geon-history-head" }, el("h2", { text: "History" }), close),
    el("p", {
      class: "muted small",
      text: "Every stored version, newest first. View opens a version read-only beside the current one.",
    }),
    message,
    list,
  );
  element.addEventListener("click", (e) => {
    if (e.target === element) element.close();
  });

  function row(v: VersionInfo, current: number): HTMLElement {
    const actions = el("span", { class: "geon-history-actions" });
    if (v.number !== current) {
      actions.append(
        el("a", {
          class: "geon-history-view",
          href: diffUrl(graphId, v.number, current),
          text: "View",
          title: `Version ${v.number} read-only, compared with the current version ${current}`,
        }),
      );
      if (canEdit)
        actions.append(
          button(
            "Restore",
            `Store version ${v.number}'s document as a new version`,
            () => void restore(v.number, current),
            "geon-history-restore",
          ),
        );
    } else actions.append(el("span", { class: "geon-history-current", text: "current" }));
    return el(
      "li",
      { class: "geon-history-version", "data-version": String(v.number) },
      el("span", { class: "geon-history-number", text: `v${v.number}` }),
      el("span", { class: "geon-history-text", text: versionText(v) }),
      el("span", {
        class: "geon-history-who muted small",
        text: `${v.author ?? "someone"} · ${ago(v.created)}`,
        title: new Date(v.created).toLocaleString(),
      }),
      actions,
    );
  }

  function folded(r: Extract<HistoryRow, { kind: "moves" }>, current: number): HTMLElement {
    const inner = el(
      "ol",
      { class: "geon-history-list" },
      ...r.versions.map((v) => row(v, current)),
    );
    return el(
      "li",
      { class: "geon-history-moves" },
      el(
        "details",
        {},
        el("summary", { class: "muted small", text: movesLabel(r.versions) }),
        inner,
      ),
    );
  }

  async function load(): Promise<void> {
    message.textContent = "";
    list.replaceChildren(el("li", { class: "muted small", text: "Loading…" }));
    try {
      const versions = await api.versions();
      const current = versions[0]?.number ?? 0;
      list.replaceChildren(
        ...historyRows(versions).map((r) =>
          r.kind === "version" ? row(r.version, current) : folded(r, current),
        ),
      );
    } catch (e) {
      list.replaceChildren();
      message.textContent = e instanceof ApiError ? e.message : String(e);
    }
  }

  async function restore(number: number, current: number): Promise<void> {
    if (
      !window.confirm(
        `Restore version ${number}? Its document becomes a new version ${current + 1}; nothing is lost.`,
      )
    )
      return;
    message.textContent = "";
    try {
      await api.restore(number, current);
      await load();
    } catch (e) {
      message.textContent = e instanceof ApiError ? e.message : String(e);
    }
  }

  const open = async (): Promise<void> => {
    if (!element.open) element.showModal();
    await load();
  };
  document.body.append(element);
  document.addEventListener("click", (e) => {
    if ((e.target as HTMLElement | null)?.closest?.(".geon-version")) void open();
  });
  return { element, open };
}
