// The two "add" dialogs: the operation palette (kernels searched as you type) and the tensor
// dialog (label, axes from chips, dtype). Each reports what the user picked through a callback;
// neither edits the document itself.

import { canonical } from "../model/axes";
import { splitRefs } from "../model/authorTensors";
import { searchKernels } from "../model/catalogue";
import { declaredAxes, DTYPES, type LoomDocument } from "../model/document";
import { axisColor } from "../render/colors";
import { button, el, submit as submitButton } from "./dom";

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
