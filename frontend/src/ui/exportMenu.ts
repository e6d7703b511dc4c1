// The editor's Export menu (issue 20): the current document as LoomGraph JSON, ONNX, a NumPy
// script, einsum strings or geon builder code, each an <a download> link to
// GET /api/v1/graphs/<id>/export?to=... (the server names the file). A <details> element, so
// the keyboard opens it (Enter or Space on "Export"), Tab walks its links and Escape closes it;
// its list is placed under the button with fixed coordinates, as the toolbar's one line scrolls
// sideways and would clip it. A link is fetched, not followed (issue 35: no silent failures): the
// file is saved under the name the server gives it, and a refusal (an exporter that cannot write
// this graph, a lost session, a network failure) opens the menu again with the server's reason.
// A placed document's export is its logical model: the server's X-Geon-Export-Notice says so
// ("exported the logical model; the plan's placement is not part of ONNX (...)") and the menu
// opens again with it, as information. Escape closes the open menu wherever the focus is.

import { el } from "./dom";
import { saveFrom } from "./download";
import "./exportMenu.css";

export interface ExportLink {
  to: string;
  label: string;
  href: string;
  title: string;
}

/** The export answer's header saying what of a plan the file leaves out. */
export const NOTICE_HEADER = "X-Geon-Export-Notice";

const FORMATS: [string, string, string][] = [
  ["json", "LoomGraph JSON", "the document as it is, with the title and description (.json)"],
  [
    "onnx",
    "ONNX",
    "an ONNX model that onnxruntime runs; every input tensor is a model input (.onnx)",
  ],
  ["numpy", "NumPy script", "a standalone script: python FILE --inputs in.npz --out out.npz (.py)"],
  ["einsum", "einsum strings", "one einsum line per contraction (.txt)"],
  ["python", "geon builder code", "Python that rebuilds the graph with geon's builder (.py)"],
];

/** The menu's links for graph ``graphId`` (served under ``api``). */
export function exportLinks(graphId: string, api = "/api/v1"): ExportLink[] {
  return FORMATS.map(([to, label, title]) => ({
    to,
    label,
    title,
    href: `${api}/graphs/${encodeURIComponent(graphId)}/export?to=${to}`,
  }));
}

/** The Export menu of a signed-in person's editor (`data-share` on #geon-editor), else null. */
export function createExportMenu(
  root: HTMLElement | null = document.getElementById("geon-editor"),
): HTMLDetailsElement | null {
  if (!root || root.dataset.share !== "1" || !root.dataset.graphId) return null;
  const list = el("div", {
    class: "geon-export-list",
    role: "menu",
    "aria-label": "export formats",
  });
  const failed = el("p", {
    class: "geon-export-error geon-form-error small",
    role: "alert",
    hidden: "",
  });
  const notice = el("p", { class: "geon-export-notice small", role: "status", hidden: "" });
  const said = (headers: Headers) => {
    const text = headers.get(NOTICE_HEADER);
    if (!text) return;
    notice.textContent = `${text[0]!.toUpperCase()}${text.slice(1)}.`;
    notice.hidden = false;
    menu.open = true;
  };
  for (const link of exportLinks(root.dataset.graphId)) {
    const a = el("a", {
      href: link.href,
      download: "",
      title: link.title,
      role: "menuitem",
      text: link.label,
    });
    a.dataset.to = link.to;
    a.addEventListener("click", (e) => {
      e.preventDefault();
      failed.hidden = true;
      notice.hidden = true;
      void saveFrom(link.href, `graph.${link.to}`, `Export as ${link.label}`, said).then((why) => {
        if (!why) return;
        failed.textContent = why;
        failed.hidden = false;
        menu.open = true;
      });
    });
    list.append(a);
  }
  list.append(failed, notice);
  const summary = el("summary", {
    class: "button",
    title: "Download the graph as JSON, ONNX, NumPy, einsum or Python",
    text: "Export ▾",
  });
  const menu = el("details", { class: "geon-export" }, summary, list);
  const place = () => {
    const box = summary.getBoundingClientRect();
    list.style.top = `${Math.round(box.bottom + 4)}px`;
    list.style.left = `${Math.round(Math.max(4, Math.min(box.left, window.innerWidth - 260)))}px`;
  };
  menu.addEventListener("toggle", () => {
    if (menu.open) place();
    else failed.hidden = notice.hidden = true;
  });
  // on the document, not the menu: after a click elsewhere, or a download, focus is not inside it
  document.addEventListener("keydown", (e) => {
    if (e.key === "Escape" && menu.open) {
      menu.open = false;
      if (menu.contains(document.activeElement)) summary.focus();
      e.stopPropagation();
    }
  });
  list.addEventListener("click", () => {
    menu.open = false;
  });
  document.addEventListener("pointerdown", (e) => {
    if (menu.open && !menu.contains(e.target as Node)) menu.open = false;
  });
  return menu;
}
