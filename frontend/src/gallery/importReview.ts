// The rename step of "Import model" (issue 35): once the worker has read the model, the import
// waits in review with its axes (name as imported, length, role, proposed name, where the model
// shows it, geon/interop/onnx_roles.py) and the page shows them as a table whose names can be
// edited; "Create graph" posts the names (POST /api/v1/imports/<id>/names) and the graph is made
// with them. Names are checked as they are typed by the rule every axis name follows (the
// server checks them again: its refusal names the bad value too). Length-1 axes keep their
// names and are only counted. Keyboard: Tab moves through the names, Enter creates the graph.

import { el } from "../ui/dom";
import { AXIS_NAME } from "../model/axes";

/** One axis of an import, as the server lists it. */
export interface ImportAxis {
  name: string;
  length: number;
  role: string;
  proposed: string;
  seen: string;
}

/** What is wrong with the name ``name`` for axis ``axis`` among ``names`` (every axis's name as
 * it stands), in the server's words; "" when nothing is. */
export function nameProblem(axis: string, name: string, names: Record<string, string>): string {
  if (!AXIS_NAME.test(name)) return `axis name "${name}" is invalid; expected a letter or "_" followed by letters, digits or "_"`;
  const other = Object.keys(names).find((k) => k !== axis && names[k] === name);
  if (other !== undefined) {
    const [a, b] = [other, axis].sort((x, y) => order(names, x) - order(names, y));
    return `name "${name}" is given to axes "${a}" and "${b}"; expected one name per axis`;
  }
  return "";
}

function order(names: Record<string, string>, key: string): number {
  return Object.keys(names).indexOf(key);
}

/** The axes a person names (length > 1) and how many length-1 axes are left as they are. */
export function namedAxes(axes: ImportAxis[]): { shown: ImportAxis[]; hidden: number } {
  const shown = axes.filter((a) => a.length > 1);
  return { shown, hidden: axes.length - shown.length };
}

/** The table of an import in review; ``onCreate`` gets ``{name as imported: name}`` of every
 * listed axis once they are all valid. */
export function reviewForm(modelName: string, axes: ImportAxis[], onCreate: (names: Record<string, string>) => void): HTMLFormElement {
  const { shown, hidden } = namedAxes(axes);
  const inputs = new Map<string, HTMLInputElement>();
  const errors = new Map<string, HTMLElement>();
  const create = el("button", { type: "submit", class: "button gallery-import-create", text: "Create graph" });
  const rows = shown.map((a) => {
    const input = el("input", { class: "gallery-import-name", value: a.proposed, "data-axis": a.name, spellcheck: "false", autocomplete: "off", "aria-label": `name of axis ${a.name} (${a.role || "no role"}, length ${a.length})` });
    const error = el("span", { class: "gallery-import-name-error", role: "alert" });
    inputs.set(a.name, input);
    errors.set(a.name, error);
    return el(
      "tr",
      { "data-axis": a.name },
      el("td", { class: "gallery-import-axis", text: a.name }),
      el("td", { class: "num", text: String(a.length) }),
      el("td", { class: "gallery-import-role", text: a.role ? a.role.replace("_", " ") : "—" }),
      el("td", {}, input, error),
      el("td", { class: "gallery-import-seen muted", text: a.seen }),
    );
  });
  const names = (): Record<string, string> => Object.fromEntries([...inputs].map(([k, i]) => [k, i.value.trim()]));
  const check = (): boolean => {
    const now = names();
    let ok = true;
    for (const [axis, error] of errors) {
      const problem = nameProblem(axis, now[axis]!, now);
      error.textContent = problem;
      inputs.get(axis)!.setAttribute("aria-invalid", problem ? "true" : "false");
      ok &&= problem === "";
    }
    create.disabled = !ok;
    return ok;
  };
  const form = el(
    "form",
    { class: "gallery-import-review", "aria-label": `axes of ${modelName}` },
    el("p", { class: "gallery-import-review-title", text: `Name the axes of ${modelName} before its graph is made: the importer read these roles off the model.` }),
    el(
      "table",
      { class: "gallery-import-axes" },
      el("thead", {}, el("tr", {}, ...["Axis", "Length", "Role", "Name", "Where the model shows it"].map((h) => el("th", { text: h })))),
      el("tbody", {}, ...rows),
    ),
    el(
      "p",
      { class: "gallery-import-review-foot" },
      create,
      hidden ? el("span", { class: "muted gallery-import-hidden", text: ` ${hidden} length-1 ${hidden === 1 ? "axis keeps its name" : "axes keep their names"}.` }) : "",
    ),
  );
  form.addEventListener("input", check);
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    if (check()) onCreate(names());
  });
  check();
  return form;
}
