// The axes panel beside the canvas: the declared axes (length-1 ones folded away unless asked
// for), a form to declare one, and editing or removing one in place. It renders from what it is
// given and reports what the user asked for through callbacks; it never edits the document.

import { declaredAxes, ROLES, tensorAxes, type LoomDocument } from "../model/document";
import { axisColor } from "../render/colors";
import { button, el, submit as submitButton } from "./dom";

export interface AxisForm {
  name: string;
  length: number | null;
  roles: string[];
}

function parseLength(text: string): number | null {
  const t = text.trim();
  if (t === "") return null;
  return /^-?\d+$/.test(t) ? Number(t) : Number.NaN;
}

function rolesPicker(selected: string[]): { element: HTMLElement; value(): string[] } {
  const select = el("select", {
    multiple: "",
    size: "3",
    class: "geon-roles",
    "aria-label": "roles",
  });
  for (const role of ROLES) {
    const o = el("option", { value: role, text: role });
    o.selected = selected.includes(role);
    select.append(o);
  }
  return { element: select, value: () => [...select.selectedOptions].map((o) => o.value) };
}

/** Levels of each axis in use by tensors: W -> ["W", "W-1"]. */
function levelsInUse(doc: LoomDocument): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const n of doc.nodes) {
    for (const ref of tensorAxes(n) ?? []) {
      const name = ref.replace(/[+-]\d+$/, "");
      const list = out.get(name) ?? [];
      if (!list.includes(ref)) list.push(ref);
      out.set(name, list.sort());
    }
  }
  return out;
}

/** The axes the list shows: length-1 ones (an import's broadcast dims) are hidden unless asked
 * for, the one being edited or one with an issue (issue 35); ``hidden`` counts the others. */
export function listedAxes<A extends { id: string; name: string; length: number | null }>(
  axes: A[],
  showOnes: boolean,
  editing: string | null,
  issues: Set<string>,
): { shown: A[]; hidden: number } {
  const shown = axes.filter(
    (a) => showOnes || a.length !== 1 || a.id === editing || issues.has(a.name),
  );
  return { shown, hidden: axes.length - shown.length };
}

export interface AxesPanelCallbacks {
  declare(form: AxisForm): string | null;
  edit(id: string, form: AxisForm): string | null;
  remove(id: string): string | null;
}

export function createAxesPanel(cb: AxesPanelCallbacks): {
  element: HTMLElement;
  update(doc: LoomDocument | null, issueAxes: Set<string>): void;
} {
  const list = el("ul", { class: "geon-axis-list" });
  const message = el("p", { class: "geon-form-error", role: "alert" });
  const name = el("input", {
    class: "geon-axis-name",
    placeholder: "name",
    "aria-label": "axis name",
    size: "6",
  });
  const length = el("input", {
    class: "geon-axis-length",
    placeholder: "length",
    "aria-label": "axis length",
    inputmode: "numeric",
    size: "4",
  });
  const roles = rolesPicker([]);
  const add = submitButton("Declare", "Declare this axis (A)", "primary geon-axis-add");
  const form = el("form", { class: "geon-axis-form" }, name, length, add);
  const more = el(
    "details",
    { class: "geon-axis-roles" },
    el("summary", { text: "roles" }),
    roles.element,
  );
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    submit();
  });
  const submit = (): void => {
    const error = cb.declare({
      name: name.value,
      length: parseLength(length.value),
      roles: roles.value(),
    });
    message.textContent = error ?? "";
    if (!error) {
      name.value = "";
      length.value = "";
      name.focus();
    }
  };
  const element = el(
    "section",
    { class: "geon-panel geon-axes", "aria-label": "axes" },
    el("h2", { text: "Axes" }),
    list,
    form,
    more,
    message,
  );
  let editing: string | null = null;
  let last: LoomDocument | null = null;
  let lastIssues = new Set<string>();
  let showOnes = false;

  const render = (): void => {
    const doc = last;
    if (!doc) return;
    const declared = declaredAxes(doc);
    const order = [...declared.keys()];
    const levels = levelsInUse(doc);
    const { shown, hidden } = listedAxes([...declared.values()], showOnes, editing, lastIssues);
    const ones = [...declared.values()].some((a) => a.length === 1);
    list.replaceChildren(
      ...shown.map((axis) => {
        const swatch = el("span", { class: "geon-swatch" });
        swatch.style.background = axisColor(axis.name, order);
        const item = el("li", { class: "geon-axis", "data-axis": axis.name });
        if (lastIssues.has(axis.name)) item.classList.add("has-issue");
        if (editing === axis.id) {
          const n = el("input", {
            value: axis.name,
            "aria-label": "axis name",
            size: "6",
            class: "geon-axis-edit-name",
          });
          const l = el("input", {
            value: axis.length === null ? "" : String(axis.length),
            "aria-label": "axis length",
            size: "4",
            class: "geon-axis-edit-length",
          });
          const r = rolesPicker(axis.roles ?? []);
          const save = (): void => {
            const error = cb.edit(axis.id, {
              name: n.value,
              length: parseLength(l.value),
              roles: r.value(),
            });
            message.textContent = error ?? "";
            if (!error) {
              editing = null;
              render();
            }
          };
          const f = el(
            "form",
            { class: "geon-axis-form" },
            swatch,
            n,
            l,
            submitButton("Save", "Save the axis", "primary geon-axis-save"),
            button("×", "Stop editing", () => {
              editing = null;
              render();
            }),
          );
          f.addEventListener("submit", (e) => {
            e.preventDefault();
            save();
          });
          item.append(f, r.element);
          queueMicrotask(() => l.focus());
          return item;
        }
        const used = (levels.get(axis.name) ?? []).join(" ");
        item.append(
          swatch,
          el("span", { class: "geon-axis-label", text: axis.name }),
          el("span", {
            class: "geon-axis-len",
            text: axis.length === null ? "unbound" : String(axis.length),
          }),
          el("span", {
            class: "geon-axis-meta",
            text: [(axis.roles ?? []).join(","), used ? `uses ${used}` : ""]
              .filter(Boolean)
              .join(" · "),
          }),
          button(
            "Edit",
            `Edit axis ${axis.name}`,
            () => {
              editing = axis.id;
              render();
            },
            "geon-small",
          ),
          button(
            "×",
            `Delete axis ${axis.name}`,
            () => {
              message.textContent = cb.remove(axis.id) ?? "";
            },
            "geon-small",
          ),
        );
        return item;
      }),
    );
    if (!declared.size)
      list.append(
        el("li", {
          class: "muted small",
          text: "No axes yet: declare H, W, ... with their lengths.",
        }),
      );
    if (ones && (hidden || showOnes)) {
      const what = hidden ? `${hidden} length-1 ${hidden === 1 ? "axis" : "axes"} hidden` : "";
      const toggle = button(
        hidden ? "Show" : "Hide length-1 axes",
        hidden ? "Show the length-1 axes" : "Hide the length-1 axes",
        () => {
          showOnes = !showOnes;
          render();
        },
        "geon-small geon-axis-ones-toggle",
      );
      list.append(el("li", { class: "muted small geon-axis-ones" }, what, what ? " " : "", toggle));
    }
  };

  return {
    element,
    update(doc, issueAxes) {
      if (
        doc === last &&
        issueAxes.size === lastIssues.size &&
        [...issueAxes].every((a) => lastIssues.has(a))
      )
        return;
      last = doc;
      lastIssues = issueAxes;
      render();
    },
  };
}
