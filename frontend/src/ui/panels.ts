// The panels around the canvas: axes, inspector, issues, the operation palette and the tensor
// dialog. Each renders from what it is given and reports what the user asked for through
// callbacks; none edits the document itself.

import { canonical } from "../model/axes";
import { inferOperation, splitRefs } from "../model/author";
import { dotOrders } from "../model/orders";
import { CATALOGUE, searchKernels } from "../model/catalogue";
import { paramsPlaceholder } from "../model/paramsExample";
import { castFixOf } from "../model/fixes";
import { namedMessage } from "../model/issues";
import {
  declaredAxes,
  DTYPES,
  nodeById,
  OPERATION,
  ROLES,
  selections,
  TENSOR,
  tensorAxes,
  type Issue,
  type LoomDocument,
  type LoomNode,
} from "../model/document";
import { axisColor } from "../render/canvas";
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

export interface InspectorCallbacks {
  applyTensor(id: string, label: string, axes: string[], dtype: string): string | null;
  applyOperation(id: string, label: string, params: unknown): string | null;
  /** Open the operation's projection window (its index space and the regions it selects). */
  openProjection?(id: string): void;
}

/** A dot's result order (params.axes): every order of its axes, the rule's marked "default";
 * ``choose`` gets the order picked (null: back to the default). None for other operations. */
function resultOrder(
  doc: LoomDocument,
  node: LoomNode,
  choose: (axes: string[] | null) => void,
): HTMLElement[] {
  const found = dotOrders(doc, node);
  if (!found) return [];
  const shown = (axes: string[]) => `(${axes.join(", ")})`;
  const select = el("select", { "aria-label": "result order", class: "geon-result-order" });
  for (const order of found.orders) {
    const isDefault = order.join() === found.byDefault.join();
    select.append(
      el("option", {
        value: order.join(","),
        text: `${shown(order)}${isDefault ? " default" : ""}`,
      }),
    );
  }
  select.value = found.current.join(",");
  select.addEventListener("change", () =>
    choose(select.value === found.byDefault.join(",") ? null : select.value.split(",")),
  );
  const why = `By default the free axes of the operand holding the dual (lower) levels come first: ${shown(found.byDefault)}. Any other order sets params.axes.`;
  return [
    el("label", { text: "Order" }),
    select,
    el("p", { class: "small muted geon-order-why", text: why }),
  ];
}

export function createInspector(cb: InspectorCallbacks): {
  element: HTMLElement;
  update(doc: LoomDocument | null, selected: string[], issues: Issue[]): void;
} {
  const body = el("div", { class: "geon-inspector-body" });
  const element = el(
    "section",
    { class: "geon-panel geon-inspector", "aria-label": "inspector" },
    el("h2", { text: "Selection" }),
    body,
  );
  let key = "";
  return {
    element,
    update(doc, selected, issues) {
      const node = doc && selected.length === 1 ? nodeById(doc).get(selected[0]!) : undefined;
      const k = JSON.stringify([
        node,
        selected,
        issues.filter((i) => node && i.nodeIds.includes(node.id)).map((i) => i.message),
      ]);
      if (k === key) return;
      key = k;
      const message = el("p", { class: "geon-form-error", role: "alert" });
      if (!doc || !selected.length) {
        body.replaceChildren(
          el("p", {
            class: "muted small",
            text: "Click a box to select it; shift-click or shift-drag to select more. Drag from a tensor's round handle onto an operation to connect it.",
          }),
        );
        return;
      }
      if (!node) {
        body.replaceChildren(
          el("p", {
            class: "small",
            text: `${selected.length} selected. Delete, copy (Ctrl+C) or drag them together.`,
          }),
        );
        return;
      }
      const label = el("input", {
        value: node.label ?? "",
        "aria-label": "label",
        class: "geon-label-input",
      });
      if (node.type === TENSOR) {
        const axes = el("input", {
          value: (tensorAxes(node) ?? []).join(", "),
          "aria-label": "tensor axes",
          class: "geon-tensor-axes",
        });
        const dtype = el("select", { "aria-label": "dtype", class: "geon-dtype" });
        for (const d of DTYPES) dtype.append(el("option", { value: d, text: d }));
        dtype.value = String(node.body.dtype ?? "float32");
        const apply = (): void => {
          message.textContent =
            cb.applyTensor(node.id, label.value, splitRefs(axes.value), dtype.value) ?? "";
        };
        const form = el(
          "form",
          { class: "geon-fields" },
          el("label", { text: "Label" }),
          label,
          el("label", { text: "Axes" }),
          axes,
          el("label", { text: "dtype" }),
          dtype,
          submitButton("Apply", "Apply (Enter)", "primary geon-apply"),
        );
        form.addEventListener("submit", (e) => {
          e.preventDefault();
          apply();
        });
        body.replaceChildren(form, message);
      } else if (node.type === OPERATION) {
        const params = el("textarea", { rows: "3", "aria-label": "params", class: "geon-params" });
        params.value = node.body.params === undefined ? "" : JSON.stringify(node.body.params);
        const nodes = nodeById(doc);
        const ports = [...selections(node.body.inputs)].map(
          ([port, list]) =>
            `${port}: ${list.map((s) => nodes.get(s.tensorId)?.label ?? "?").join(", ")}`,
        );
        const inf = inferOperation(doc, node);
        // a valid example for this kernel, in the first input's own axes (issue 36)
        const first = [...selections(node.body.inputs).values()][0]?.[0];
        const firstTensor = first ? nodes.get(first.tensorId) : undefined;
        params.placeholder = paramsPlaceholder(
          String(node.body.kernel),
          (firstTensor && tensorAxes(firstTensor)) ?? [],
          inf.kind === "ok" ? inf.result : null,
        );
        // a custom kernel (not in the catalogue) is what its IPFSignature says: nothing to infer
        const custom = !CATALOGUE.has(String(node.body.kernel));
        const predicted = custom
          ? "custom kernel: its IPFSignature says what it reads and writes (Index space & projections)"
          : inf.kind === "ok"
            ? `→ (${inf.result.join(", ")})`
            : inf.kind === "error"
              ? `✗ ${inf.message}`
              : "inferred by the server";
        const apply = (): void => {
          let p: unknown;
          try {
            p = params.value.trim() ? JSON.parse(params.value) : null;
          } catch {
            message.textContent = `params "${params.value}" are not JSON; expected an object such as {"axes": ["H", "N"]}`;
            return;
          }
          message.textContent = cb.applyOperation(node.id, label.value, p) ?? "";
        };
        const form = el(
          "form",
          { class: "geon-fields" },
          el("label", { text: "Label" }),
          label,
          el("label", { text: "Kernel" }),
          el("span", { class: "geon-kernel", text: String(node.body.kernel) }),
          el("label", { text: "Inputs" }),
          el("span", {
            class: "small",
            text: ports.join("; ") || "none yet: drag tensors onto it",
          }),
          el("label", { text: "Params" }),
          params,
          el("label", { text: "Output" }),
          el("span", { class: `geon-predicted ${custom ? "custom" : inf.kind}`, text: predicted }),
          ...resultOrder(doc, node, (axes) => {
            const { axes: _old, ...rest } = (node.body.params ?? {}) as Record<string, unknown>;
            const next = axes ? { ...rest, axes } : rest;
            message.textContent =
              cb.applyOperation(node.id, label.value, Object.keys(next).length ? next : null) ?? "";
          }),
          submitButton("Apply", "Apply (Enter)", "primary geon-apply"),
        );
        form.addEventListener("submit", (e) => {
          e.preventDefault();
          apply();
        });
        const open = cb.openProjection;
        const projection = open
          ? button(
              "Index space & projections",
              "Show the operation's index space and the region each input and output selects",
              () => open(node.id),
              "geon-open-projection",
            )
          : "";
        body.replaceChildren(form, message, projection);
      } else {
        body.replaceChildren(el("p", { class: "small", text: `${node.type.split("/").pop()}` }));
      }
    },
  };
}

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

/** Shown only below a tablet's width (editor.css), where the canvas is not usable: the page
 * says so, and the lesson or puzzle text stays readable (issue 36). */
export function narrowNote(): HTMLElement {
  return el("p", {
    class: "geon-narrow-note",
    role: "note",
    text: "The editor needs a wider screen: at least 700 px, such as a tablet. The lesson or puzzle text stays readable below; open this page on a wider screen to build the graph.",
  });
}

/** A modal chooser over a list, filtered as you type; Enter takes the first match. */
function dialog(titleText: string): { element: HTMLDialogElement; body: HTMLElement } {
  const body = el("div", { class: "geon-dialog-body" });
  const element = el("dialog", { class: "geon-dialog" }, el("h2", { text: titleText }), body);
  element.addEventListener("click", (e) => {
    if (e.target === element) element.close();
  });
  return { element, body };
}

export function createPalette(onPick: (kernel: string) => void): {
  element: HTMLDialogElement;
  open(): void;
  prefer(kernels: readonly string[]): void;
} {
  const { element, body } = dialog("Add an operation");
  const search = el("input", {
    placeholder: "search kernels: dot, reduction, exp…",
    "aria-label": "search kernels",
    class: "geon-palette-search",
  });
  const list = el("ul", { class: "geon-palette-list", role: "listbox" });
  const hint = el("p", {
    class: "muted small",
    text: "Select input tensors first to connect them in order (x, then y).",
  });
  body.append(search, list, hint);
  // a puzzle's allowed kernels come first (issue 36), after a kernel named exactly
  let preferred: readonly string[] = [];
  const render = (): void => {
    const found = searchKernels(search.value, preferred);
    list.replaceChildren(
      ...found.map((k) => {
        const allowed = preferred.includes(k.name) ? " · allowed in this puzzle" : "";
        const item = el(
          "li",
          { role: "option", tabindex: "0", "data-kernel": k.name },
          el("strong", { text: k.name }),
          el("span", {
            class: "muted small",
            text: ` ${k.doc} · ${k.inputs.join(", ")}${allowed}`,
          }),
        );
        item.addEventListener("click", () => pick(k.name));
        item.addEventListener("keydown", (e) => {
          if (e.key === "Enter") {
            // no keypress may follow: focus returns to the button that opened the palette
            e.preventDefault();
            pick(k.name);
          }
        });
        return item;
      }),
    );
  };
  const pick = (name: string): void => {
    element.close();
    onPick(name);
  };
  search.addEventListener("input", render);
  search.addEventListener("keydown", (e) => {
    if (e.key === "Enter") {
      e.preventDefault();
      const first = searchKernels(search.value, preferred)[0];
      if (first) pick(first.name);
    }
  });
  return {
    element,
    open() {
      search.value = "";
      render();
      element.showModal();
      search.focus();
    },
    prefer(kernels) {
      preferred = [...kernels];
    },
  };
}

export function createTensorDialog(
  onCreate: (label: string, axes: string[], dtype: string) => string | null,
): { element: HTMLDialogElement; open(doc: LoomDocument): void } {
  const { element, body } = dialog("Add a tensor");
  const label = el("input", {
    placeholder: "x",
    "aria-label": "tensor label",
    class: "geon-new-label",
  });
  const axes = el("input", {
    placeholder: "H, W-1",
    "aria-label": "tensor axes",
    class: "geon-new-axes",
  });
  const dtype = el("select", { "aria-label": "dtype" });
  for (const d of DTYPES) dtype.append(el("option", { value: d, text: d }));
  const choices = el("div", { class: "geon-axis-choices" });
  const message = el("p", { class: "geon-form-error", role: "alert" });
  const create = submitButton("Add tensor", "Add the tensor", "primary geon-new-tensor-add");
  const form = el(
    "form",
    { class: "geon-fields" },
    el("label", { text: "Label" }),
    label,
    el("label", { text: "Axes" }),
    axes,
    el("span", {}),
    choices,
    el("label", { text: "dtype" }),
    dtype,
    create,
  );
  body.append(
    form,
    message,
    el("p", {
      class: "muted small",
      text: "Click an axis to add it; write W-1 for its dual (the side a dot contracts with W).",
    }),
  );
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    submit();
  });
  const submit = (): void => {
    const error = onCreate(label.value, splitRefs(axes.value), dtype.value);
    message.textContent = error ?? "";
    if (!error) element.close();
  };
  return {
    element,
    open(doc) {
      label.value = "";
      axes.value = "";
      message.textContent = "";
      const order = [...declaredAxes(doc).keys()];
      choices.replaceChildren(
        ...order.flatMap((name) =>
          [name, `${name}-1`].map((ref) => {
            const chip = button(
              ref,
              `add ${ref}`,
              () => {
                const current = splitRefs(axes.value);
                axes.value = [...current, canonical(ref)].join(", ");
              },
              "geon-chip",
            );
            chip.style.background = axisColor(name, order);
            return chip;
          }),
        ),
      );
      element.showModal();
      label.focus();
    },
  };
}
