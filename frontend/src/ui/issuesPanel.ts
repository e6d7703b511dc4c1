// The issues panel: the graph's errors and warnings (a cut list says how many are shown), each
// one jumping to its node and offering its one-click fix, with information entries below. It
// reports what the user asked for through callbacks; it never edits the document itself.

import { castFixOf } from "../model/fixes";
import { namedMessage } from "../model/issues";
import { nodeById, type Issue, type LoomDocument, type LoomNode } from "../model/document";
import { button, el } from "./dom";

/** The line above a cut list: "showing 200 of 5,312 issues" (empty when every issue is listed). */
export function issuesShown(listed: number, counts: { error: number; warning: number }): string {
  const total = counts.error + counts.warning;
  return listed < total
    ? `showing ${listed.toLocaleString("en-US")} of ${total.toLocaleString("en-US")} issues`
    : "";
}

/**
 * The one-click fix an issue offers: the button's label and its tooltip, or null. An
 * AccidentalBroadcast warning offers "Insert cast_axes" (model/fixes.ts builds the edit).
 */
export function issueFix(issue: Issue): { label: string; title: string } | null {
  const fix = castFixOf(issue);
  if (!fix) return null;
  return {
    label: "Insert cast_axes",
    title: `relabel ${fix.fromAxis} as ${fix.toAxis} before the operation (one undo step)`,
  };
}

/**
 * The issues panel. The server may send only the first issues with the full counts
 * (``counts``): the title counts them all and a line says how many are listed. ``onFix``, when
 * given, runs an issue's one-click fix (see :func:`issueFix`). ``explain`` adds information
 * entries below them (issue 35: why the current plan runs operations whole, model/planWhy.ts),
 * which the title does not count: they are not problems of the graph.
 */
export function createIssuesPanel(
  onJump: (nodeId: string) => void,
  onFix?: (issue: Issue) => void,
): {
  element: HTMLElement;
  update(
    issues: Issue[],
    doc: LoomDocument | null,
    counts: { error: number; warning: number },
  ): void;
  explain(notes: Issue[]): void;
} {
  const title = el("h2", { text: "Issues" });
  const more = el("p", { class: "geon-issues-more muted small" });
  const list = el("ol", { class: "geon-issue-list" });
  const element = el(
    "section",
    { class: "geon-panel geon-issues-panel", "aria-label": "issues" },
    title,
    more,
    list,
  );
  let key = "";
  let shown: {
    issues: Issue[];
    doc: LoomDocument | null;
    counts: { error: number; warning: number };
  } = { issues: [], doc: null, counts: { error: 0, warning: 0 } };
  let notes: Issue[] = [];
  const item = (issue: Issue, nodes: Map<string, LoomNode>): HTMLElement => {
    const target = issue.nodeIds.find((id) => nodes.has(id));
    const where = target
      ? (nodes.get(target)?.label ?? String(nodes.get(target)?.body.kernel ?? ""))
      : "";
    const row = el(
      "li",
      {
        class: `geon-issue ${issue.severity}`,
        tabindex: "0",
        "data-constraint": issue.constraint,
        "data-node": target ?? "",
      },
      el("span", {
        class: "geon-issue-where",
        text: `${issue.constraint}${where ? ` · ${where}` : ""}`,
      }),
      el("span", { class: "geon-issue-message", text: namedMessage(issue.message, nodes) }),
    );
    const fix = onFix ? issueFix(issue) : null;
    if (fix && onFix) {
      const b = button(fix.label, fix.title, () => onFix(issue), "geon-issue-fix");
      b.addEventListener("click", (e) => e.stopPropagation());
      b.addEventListener("keydown", (e) => e.stopPropagation());
      row.append(b);
    }
    const jump = (): void => {
      if (target) onJump(target);
    };
    row.addEventListener("click", jump);
    row.addEventListener("keydown", (e) => {
      if (e.key === "Enter") jump();
    });
    return row;
  };
  const update = (
    issues: Issue[],
    doc: LoomDocument | null,
    counts: { error: number; warning: number },
  ): void => {
    shown = { issues, doc, counts };
    const k =
      JSON.stringify([issues, notes]) + (doc ? doc.nodes.length : 0) + JSON.stringify(counts);
    if (k === key) return;
    key = k;
    const total = Math.max(issues.length, counts.error + counts.warning);
    title.textContent = total ? `Issues (${total.toLocaleString("en-US")})` : "Issues";
    more.textContent = issuesShown(issues.length, counts);
    more.hidden = !more.textContent;
    const nodes: Map<string, LoomNode> = doc ? nodeById(doc) : new Map();
    list.replaceChildren(...issues.map((issue) => item(issue, nodes)));
    if (!issues.length)
      list.append(
        el("li", { class: "geon-no-issues", text: "No issues: the graph checks clean." }),
      );
    list.append(...notes.map((note) => item(note, nodes)));
  };
  return {
    element,
    update,
    explain(next) {
      notes = next;
      update(shown.issues, shown.doc, shown.counts);
    },
  };
}
