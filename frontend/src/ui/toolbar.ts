// The toolbar above the canvas: connection, version, issue count, who is here, the authoring
// buttons (each runs a registered action), graph search, the Export menu, and Run with its
// status. It is one line at any width: the run's status and outputs shrink (cut with an
// ellipsis, whole in their tooltip) before anything else does, and a window too narrow for the
// buttons scrolls the bar sideways rather than wrapping it; every control stays in the tab
// order. When the line drops, the connection status says so in words, counts down to the next
// try (with "retry now") and how many unsaved edits are kept; when the server refused the
// session it says why (with a sign-in link when signed out).

import { action, shortcutLabel } from "../actions/actions";
import type { EditorState } from "../model/state";
import { CLOSE_SIGNED_OUT } from "../sync/socket";
import { button, el } from "./dom";
import { createExportMenu } from "./exportMenu";
import { createShareDialog } from "./share";

export interface Toolbar {
  element: HTMLElement;
  search: HTMLInputElement;
  update(
    state: EditorState,
    extra: {
      canUndo: boolean;
      canRedo: boolean;
      found: number;
      colors: Map<string, string>;
      me: string;
      readOnly: string | null;
    },
  ): void;
}

interface OutputSummary {
  label: string;
  /** Kept only because the run keeps every tensor (the worker marks it: an operation reads it). */
  intermediate?: boolean;
  shape: number[];
  dtype: string;
  sum?: number | string;
}

/** The Share button, when the page offers sharing (`data-share` on #geon-editor: a signed-in
 * person's editor, not a link visitor's); it opens the Share dialog (./share.ts). The toolbar
 * shows it only while the server says the person is an owner. */
export function shareButton(
  root: HTMLElement | null = document.getElementById("geon-editor"),
): HTMLButtonElement | null {
  if (!root || root.dataset.share !== "1") return null;
  const csrf =
    document.querySelector<HTMLInputElement>("input[name=csrfmiddlewaretoken]")?.value ?? "";
  const dialog = createShareDialog({
    graphId: root.dataset.graphId ?? "",
    csrf,
    me: root.dataset.user ?? "",
  });
  return button(
    "Share",
    "Share the graph: people, roles, invitations, a view-only link",
    () => void dialog.open(),
    "geon-share-button",
  );
}

/** One line about a finished run's outputs: label, shape and sum of each (at most three); the
 * intermediates a run kept are only counted. */
export function describeOutputs(result: Record<string, unknown>): string {
  const all = (result.outputs as OutputSummary[] | undefined) ?? [];
  const outputs = all.filter((o) => !o.intermediate);
  const kept = all.length - outputs.length;
  const shown = outputs.slice(0, 3).map((o) => {
    const shape = o.shape.length ? o.shape.join("×") : "scalar";
    const sum = typeof o.sum === "number" ? `, sum ${Number(o.sum.toPrecision(6))}` : "";
    return `${o.label} ${shape} ${o.dtype}${sum}`;
  });
  const more = outputs.length > 3 ? ` and ${outputs.length - 3} more` : "";
  const intermediates = kept ? ` (and ${plural(kept, "intermediate")} kept)` : "";
  return shown.length ? `outputs: ${shown.join("; ")}${more}${intermediates}` : "";
}

function plural(n: number, noun: string): string {
  return `${n.toLocaleString("en-US")} ${noun}${n === 1 ? "" : "s"}`;
}

/** What the connection status says: "live", the reconnect countdown with the kept edits, or why the editor stopped. */
export function connectionText(
  state: Pick<EditorState, "connection" | "link" | "unsaved">,
  now: number,
): string {
  const { link, unsaved } = state;
  const kept = unsaved
    ? ` (your ${plural(unsaved, "unsaved edit")} ${unsaved === 1 ? "is" : "are"} kept)`
    : "";
  if (link.refused)
    return `${link.refused.message}${unsaved ? ` (${plural(unsaved, "unsaved edit")} could not be saved)` : ""}`;
  if (state.connection === "open") return "live";
  if (!link.lost) return "connecting…";
  if (link.retryAt === null) return `connection lost — reconnecting now…${kept}`;
  const seconds = Math.max(1, Math.ceil((link.retryAt - now) / 1000));
  return `connection lost — reconnecting in ${seconds} s…${kept}`;
}

/** The issue count in the toolbar (every issue, even when the list sent is shorter), and its tooltip by severity. */
export function issuesText(counts: EditorState["issueCounts"]): { text: string; title: string } {
  const total = counts.error + counts.warning;
  return {
    text: plural(total, "issue"),
    title: `${plural(counts.error, "error")}, ${plural(counts.warning, "warning")}`,
  };
}

export function createToolbar(
  runAction: (name: string) => void,
  onRun: () => void,
  onSearch: (text: string, next: boolean) => void,
  onRetry: () => void,
): Toolbar {
  const mac = /Mac/.test(navigator.platform);
  const act = (name: string, label: string, cls = ""): HTMLButtonElement => {
    const a = action(name);
    const b = button(
      label,
      `${a.title} (${shortcutLabel(a, mac)})`,
      () => runAction(name),
      `geon-act-${name} ${cls}`,
    );
    b.dataset.action = name;
    b.dataset.title = b.title;
    return b;
  };
  const connection = el("span", { class: "geon-connection", role: "status" });
  const connectionLabel = el("span", { class: "geon-connection-text" });
  const retry = button("retry now", "Try to reconnect now", onRetry, "geon-retry link");
  const signIn = el("a", { class: "geon-sign-in", text: "sign in" });

  const version = el("button", {
    type: "button",
    class: "geon-version",
    title: "History: every version, what it did, view or restore one",
  });
  const role = el("span", { class: "geon-role", role: "status" });
  const issues = el("span", { class: "geon-issues" });
  const undo = act("undo", "↶ Undo");
  const redo = act("redo", "↷ Redo");
  const tensor = act("newTensor", "+ Tensor");
  const op = act("palette", "+ Operation");
  const fit = act("zoomToFit", "Fit");
  const help = act("help", "?");
  const search = el("input", {
    type: "search",
    placeholder: "Search graph (/)",
    "aria-label": "search the graph",
    class: "geon-search",
  });
  const found = el("span", { class: "geon-found muted small" });
  const people = el("span", { class: "geon-present", "aria-label": "who is here" });
  const share = shareButton();
  const exportMenu = createExportMenu();
  const run = button("Run", "Run the graph on the worker", onRun, "geon-run primary");
  const status = el("span", { class: "geon-run-status", role: "status" });
  const result = el("span", { class: "geon-run-result" });
  search.addEventListener("input", () => onSearch(search.value, false));
  search.addEventListener("keydown", (e) => {
    if (e.key === "Enter") onSearch(search.value, true);
    if (e.key === "Escape") {
      search.value = "";
      onSearch("", false);
      search.blur();
    }
  });
  const group = (...children: Node[]) => el("span", { class: "geon-group" }, ...children);
  const element = el(
    "div",
    { class: "geon-toolbar", role: "toolbar" },
    group(connection, role, version, issues),
    group(undo, redo),
    group(tensor, op, fit, ...(exportMenu ? [exportMenu] : [])),
    group(search, found),
    el("span", { class: "geon-spacer" }),
    help,
    people,
    el("span", { class: "geon-group geon-run-group" }, run, status, result),
  );
  const runGroup = element.lastElementChild as HTMLElement;
  return {
    element,
    search,
    update(state, extra) {
      connectionLabel.textContent = connectionText(state, Date.now());
      connectionLabel.title = connectionLabel.textContent;
      connection.dataset.state = state.link.refused ? "refused" : state.connection;
      connection.dataset.lost = String(state.link.lost || state.link.refused !== null);
      // "retry now" while waiting, "sign in" when signed out; present only then (a hidden control would still be in the bar)
      const waiting = state.link.refused === null && state.link.retryAt !== null;
      const signedOut = state.link.refused?.code === CLOSE_SIGNED_OUT;
      signIn.setAttribute(
        "href",
        `/accounts/login/?next=${encodeURIComponent(window.location.pathname)}`,
      );
      connection.replaceChildren(
        connectionLabel,
        ...(waiting ? [retry] : []),
        ...(signedOut ? [signIn] : []),
      );
      version.textContent = state.version === null ? "version …" : `version ${state.version}`;
      const counts = issuesText(state.issueCounts);
      issues.textContent = state.version === null ? "" : counts.text;
      issues.title = counts.title;
      issues.dataset.count = String(state.issueCounts.error + state.issueCounts.warning);
      // a viewer's or reviewer's role, and the editing controls they cannot use, with the reason
      role.textContent = state.role && extra.readOnly ? `${state.role} · read-only` : "";
      role.title = extra.readOnly ?? "";
      role.hidden = !role.textContent;
      for (const b of [undo, redo, tensor, op])
        b.title = extra.readOnly ?? b.dataset.title ?? b.title;
      undo.disabled = !extra.canUndo || extra.readOnly !== null;
      redo.disabled = !extra.canRedo || extra.readOnly !== null;
      tensor.disabled = op.disabled = extra.readOnly !== null;
      // people are managed by owners: the button follows the role as the server last said it,
      // so handing the graph over or a demotion takes it away, and a promotion gives it, live
      const owner = state.role === "owner";
      if (share && owner && !share.isConnected) runGroup.before(share);
      if (share && !owner && share.isConnected) share.remove();
      found.textContent = search.value ? `${extra.found} found` : "";
      people.replaceChildren(
        ...state.present.map((p) => {
          const badge = el("span", {
            class: "geon-person",
            title: p.user === extra.me ? `${p.user} (you)` : p.user,
            text: p.user.slice(0, 2).toUpperCase(),
          });
          badge.dataset.user = p.user;
          badge.style.background = extra.colors.get(p.user) ?? "#5b6677";
          return badge;
        }),
      );
      run.disabled =
        state.document === null ||
        state.run?.status === "queued" ||
        state.run?.status === "running";
      const r = state.run;
      status.textContent =
        state.message ||
        (r
          ? `run ${r.id}: ${r.status}${r.status === "running" ? ` ${Math.round(r.progress * 100)}%` : ""}${r.error ? ` — ${r.error}` : ""}`
          : "");
      status.dataset.status = state.message ? "message" : (r?.status ?? "");
      // both are cut to the toolbar's one line; the whole text is their tooltip (and in the run panel)
      status.title = status.textContent;
      result.textContent = r?.status === "done" ? describeOutputs(r.result) : "";
      result.title = result.textContent;
    },
  };
}
