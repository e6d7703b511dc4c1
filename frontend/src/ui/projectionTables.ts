// The projection window's IPF tables: per port, the IPF as a labelled read-only table (catalogue
// kernels) or as fields to edit (custom kernels), each with the sentence that says how a row reads.
// projection.ts builds the window and owns the drafts; these only render what they are given.

import type { IPF } from "../model/ipf";
import type { IpfFields, OperationProjection, PortProjection } from "../model/projection";
import { el } from "./dom";
import { named } from "./projectionMaps";

/** How a row of an IPF reads (beside every table of one). */
const LEGEND =
  "Each row is a dim of the tensor: at an index point it starts at Σ (number × that index axis) + offset and is shape cells long.";

/** The IPF as a labelled table: per tensor dim, the coefficient of each index axis, the offset
 * and the shape, with the sentence that says how a row reads (issue 21: the notation explained). */
export function formula(v: OperationProjection, port: PortProjection, ipf: IPF): HTMLElement {
  const table = el("table", { class: "geon-ipf-edit geon-ipf-formula" });
  table.append(
    el(
      "tr",
      {},
      el("th", { text: "" }),
      ...v.indexAxes.map((a) => el("th", { text: a })),
      el("th", { text: "offset" }),
      el("th", { text: "shape" }),
    ),
  );
  ipf.projection.forEach((row, r) => {
    const cells = [...row, ipf.offset[r]!, ipf.shape[r]!].map((n) => el("td", { text: String(n) }));
    table.append(el("tr", {}, el("th", { text: named(port.axes, r) }), ...cells));
  });
  return el("div", {}, table, el("p", { class: "geon-ipf-legend small muted", text: LEGEND }));
}

/** A custom kernel's IPF as fields; ``edited`` is told of each keystroke. */
export function ipfEditor(
  v: OperationProjection,
  port: PortProjection,
  f: IpfFields,
  edited: (port: PortProjection, input: HTMLInputElement) => void,
): HTMLElement {
  const table = el("table", { class: "geon-ipf-edit" });
  const head = el(
    "tr",
    {},
    el("th", { text: "" }),
    ...v.indexAxes.map((a) => el("th", { text: a })),
    el("th", { text: "offset" }),
    el("th", { text: "shape" }),
  );
  table.append(head);
  f.projection.forEach((row, r) => {
    const tr = el("tr", {}, el("th", { text: named(port.axes, r) }));
    const cell = (value: string, cls: string, set: (t: string) => void, label: string) => {
      const input = el("input", {
        class: `geon-ipf-field ${cls}`,
        value,
        inputmode: "numeric",
        "aria-label": label,
        "data-row": String(r),
      });
      input.addEventListener("input", () => {
        set(input.value);
        edited(port, input);
      });
      return el("td", {}, input);
    };
    row.forEach((value, c) =>
      tr.append(
        cell(
          value,
          "geon-ipf-p",
          (t) => (f.projection[r]![c] = t),
          `projection of ${port.label} row ${r} column ${c}`,
        ),
      ),
    );
    tr.append(
      cell(
        f.offset[r]!,
        "geon-ipf-offset",
        (t) => (f.offset[r] = t),
        `offset of ${port.label} row ${r}`,
      ),
    );
    tr.append(
      cell(
        f.shape[r]!,
        "geon-ipf-shape",
        (t) => (f.shape[r] = t),
        `shape of ${port.label} row ${r}`,
      ),
    );
    table.append(tr);
  });
  return el("div", {}, table, el("p", { class: "geon-ipf-legend small muted", text: LEGEND }));
}
