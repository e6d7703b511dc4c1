// The inspector: the selection's fields (a tensor's label, axes and dtype; an operation's label,
// params and a dot's result order). It renders from what it is given and reports edits through
// callbacks; it never edits the document itself.

import { splitRefs } from "../model/authorTensors";
import { inferOperation } from "../model/derive";
import { dotOrders } from "../model/orders";
import { CATALOGUE } from "../model/catalogue";
import { paramsPlaceholder } from "../model/paramsExample";
import {
  DTYPES,
  nodeById,
  OPERATION,
  selections,
  TENSOR,
  tensorAxes,
  type Issue,
  type LoomDocument,
  type LoomNode,
} from "../model/document";
import { button, el, submit as submitButton } from "./dom";

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
