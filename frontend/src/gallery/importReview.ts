// The rename step of "Import model" (issue 35): once the worker has read the model, the import
// waits in review with its axes (name as imported, length, role, proposed name, where the model
// shows it, geon/interop/onnx_roles.py) and the page shows them as a table whose names can be
// edited; "Create graph" posts the names (POST /api/v1/imports/<id>/names) and the graph is made
// with them. Names are checked as they are typed by the rule every axis name follows (the
// server checks them again: its refusal names the bad value too), in the server's words: the
// rule, its length and the clash with another axis, a hidden length-1 one too, are held to the
// server by tests/interop/import_name_cases.json. Length-1 axes keep their names and are only
// counted. Keyboard: Tab moves through the names, Enter creates the graph.

import { el } from "../ui/dom";
import { AXIS_NAME } from "../model/axes";
import { showText } from "../model/infer/messages";

/** One axis of an import, as the server lists it. */
export interface ImportAxis {
  name: string;
  length: number;
  role: string;
  proposed: string;
  seen: string;
}

/** The longest axis name (geon/core/limits.py MAX_AXIS_NAME_LENGTH). */
export const MAX_AXIS_NAME_LENGTH = 128;

/** What is wrong with ``name`` for axis ``axis`` by itself, in the server's words
 * (geon.interop.onnx_roles.check_names over geon.core.axes.Axis); "" when nothing is. */
function valueProblem(axis: string, name: string): string {
  const prefix = `the name for axis "${axis}": `;
  if (name.length > MAX_AXIS_NAME_LENGTH)
    return `${prefix}axis name "${showText(name)}" is too long; expected at most ${MAX_AXIS_NAME_LENGTH} characters`;
  if (!AXIS_NAME.test(name))
    return `${prefix}axis name "${name}" is invalid; expected a letter or "_" followed by letters, digits or "_"`;
  return "";
}

/** The name each axis ends with: ``names`` over the proposals (hidden length-1 axes keep theirs). */
const finalName = (a: ImportAxis, names: Record<string, string>): string =>
  names[a.name] ?? a.proposed;

const clash = (name: string, a: string, b: string): string =>
  `name "${name}" is given to axes "${a}" and "${b}"; expected one name per axis`;

/** What is wrong with a set of names: ``refusal``, the server's, and each axis's own error. */
export interface NamesProblem {
  /** The server's refusal of the names, word for word, or "" when it takes them. */
  refusal: string;
  /** Name as imported -> what is wrong with that axis's name (absent: nothing): its own bad value,
   * else the first clash it is in (a hidden length-1 axis's too). */
  byAxis: Map<string, string>;
}

/** The one check of ``names`` (``{name as imported: name}``, in the table's order) for an
 * import's ``axes`` (in the server's order): every bad name in ``names``, then every name an axis
 * ends with that an earlier one has; the first is the server's refusal, and each axis's error is
 * the first that is about it. The rename table shows ``byAxis``; the shared cases
 * (tests/interop/import_name_cases.json) hold ``refusal`` to the server, and that it is the error
 * of the axes it names. */
export function namesProblem(axes: ImportAxis[], names: Record<string, string>): NamesProblem {
  const found: { about: string[]; problem: string }[] = [];
  for (const [axis, name] of Object.entries(names)) {
    const problem = valueProblem(axis, name);
    if (problem) found.push({ about: [axis], problem });
  }
  const owner = new Map<string, string>();
  for (const a of axes) {
    const name = finalName(a, names);
    const first = owner.get(name);
    if (first === undefined) owner.set(name, a.name);
    else found.push({ about: [first, a.name], problem: clash(name, first, a.name) });
  }
  const byAxis = new Map<string, string>();
  for (const { about, problem } of found)
    for (const axis of about) if (!byAxis.has(axis)) byAxis.set(axis, problem);
  return { refusal: found[0]?.problem ?? "", byAxis };
}

/** The axes a person names (length > 1) and how many length-1 axes are left as they are. */
export function namedAxes(axes: ImportAxis[]): { shown: ImportAxis[]; hidden: number } {
  const shown = axes.filter((a) => a.length > 1);
  return { shown, hidden: axes.length - shown.length };
}

/** The table of an import in review; ``onCreate`` gets ``{name as imported: name}`` of every
 * listed axis once they are all valid. */
export function reviewForm(
  modelName: string,
  axes: ImportAxis[],
  onCreate: (names: Record<string, string>) => void,
): HTMLFormElement {
  const { shown, hidden } = namedAxes(axes);
  const inputs = new Map<string, HTMLInputElement>();
  const errors = new Map<string, HTMLElement>();
  const create = el("button", {
    type: "submit",
    class: "button gallery-import-create",
    text: "Create graph",
  });
  const rows = shown.map((a) => {
    const input = el("input", {
      class: "gallery-import-name",
      value: a.proposed,
      "data-axis": a.name,
      spellcheck: "false",
      autocomplete: "off",
      "aria-label": `name of axis ${a.name} (${a.role || "no role"}, length ${a.length})`,
    });
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
  const names = (): Record<string, string> =>
    Object.fromEntries([...inputs].map(([k, i]) => [k, i.value.trim()]));
  const check = (): boolean => {
    const { byAxis } = namesProblem(axes, names());
    let ok = true;
    for (const [axis, error] of errors) {
      const problem = byAxis.get(axis) ?? "";
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
    el("p", {
      class: "gallery-import-review-title",
      text: `Name the axes of ${modelName} before its graph is made: the importer read these roles off the model.`,
    }),
    el(
      "table",
      { class: "gallery-import-axes" },
      el(
        "thead",
        {},
        el(
          "tr",
          {},
          ...["Axis", "Length", "Role", "Name", "Where the model shows it"].map((h) =>
            el("th", { text: h }),
          ),
        ),
      ),
      el("tbody", {}, ...rows),
    ),
    el(
      "p",
      { class: "gallery-import-review-foot" },
      create,
      hidden
        ? el("span", {
            class: "muted gallery-import-hidden",
            text: ` ${hidden} length-1 ${hidden === 1 ? "axis keeps its name" : "axes keep their names"}.`,
          })
        : "",
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
