// The projection window of an operation: its index space as a grid of cells with the index
// axes' names on its sides (two dims shown; the others are held at a chosen coordinate), its
// applications as blocks on it, and per input and output a map of the tensor with the region that
// the chosen index point (click a cell) or application selects, the other applications' regions
// as bands (where input bands overlap, that is the halo) and, for a padded read, the footprint
// past the tensor's edge. For custom kernels the projection, offset and shape are fields: the
// regions follow as you type, and "Apply projection" sends one undoable edit. The window only
// renders what it is given (``model/projection.ts`` computes it; ``projectionPaint.ts`` paints the
// grid and the maps with ``projectionMaps.ts``'s helpers; ``projectionTables.ts`` writes the IPF
// tables and fields) and calls back.

import "./projection.css";
import { nodeById, OPERATION, type LoomDocument, type LoomNode } from "../model/document";
import type { IPF } from "../model/ipf";
import {
  fieldsOf,
  operationProjection,
  parseFields,
  pickRange,
  regions,
  type IpfFields,
  type OperationProjection,
  type Pick,
  type PortProjection,
} from "../model/projection";
import { button, el } from "./dom";
import { framed, sized, type Dims, type Paint } from "./projectionMaps";
import { drawGrid, drawPort, type PortFigure } from "./projectionPaint";
import { formula, ipfEditor } from "./projectionTables";

export interface ProjectionCallbacks {
  /** Send the edited IPFs as one edit; an error message, or null when it was sent. */
  commit(opId: string, drafts: Map<string, IPF>): string | null;
  /** Select a node (an application picked in the window). */
  select?(id: string): void;
}

export function createProjectionWindow(cb: ProjectionCallbacks): {
  element: HTMLElement;
  update(doc: LoomDocument | null, selected: string[]): void;
  open(opId: string): void;
  close(): void;
  readonly visible: boolean;
} {
  const title = el("h2", { class: "geon-ipf-title" });
  const closeButton = button(
    "×",
    "Close the projection window",
    () => close(),
    "geon-small geon-ipf-close",
  );
  const body = el("div", { class: "geon-ipf-body" });
  const element = el(
    "section",
    { class: "geon-projection", hidden: "", "aria-label": "projection window" },
    el("header", { class: "geon-ipf-head" }, title, closeButton),
    body,
  );

  let doc: LoomDocument | null = null;
  let opId: string | null = null;
  let seen: unknown[] = [];
  let view: OperationProjection | null = null;
  let pick: Pick = { kind: "point", point: [] };
  let dims: Dims = [-1, -1];
  let drafts = new Map<string, IPF>();
  let fields = new Map<string, IpfFields>();
  // what render() builds once per operation and redraw() refreshes as the pick or drafts change
  let gridPaint: Paint | null = null;
  let pickedText: HTMLElement | null = null;
  let pickSelect: HTMLSelectElement | null = null;
  let error: HTMLElement | null = null;
  const figures = new Map<string, PortFigure>();

  function close(): void {
    opId = null;
    view = null;
    element.hidden = true;
  }

  /** The nodes whose change means the window must be built again. */
  function watched(d: LoomDocument, id: string): unknown[] {
    const nodes = nodeById(d);
    const op = nodes.get(id);
    if (!op) return [];
    const v = operationProjection(d, id);
    const apps: LoomNode[] = d.nodes.filter((n) => n.body.operationId === id);
    return [op, ...apps, ...(v?.ports.map((p) => nodes.get(p.tensorId)) ?? [])];
  }

  function defaultPick(v: OperationProjection): Pick {
    if (v.applications.length) return { kind: "application", id: v.applications[0]!.id };
    return { kind: "point", point: v.indexRange ? [...v.indexRange.start] : [] };
  }

  function pickValid(v: OperationProjection, p: Pick): boolean {
    if (p.kind === "application") return v.applications.some((a) => a.id === p.id);
    return !!v.indexRange && p.point.length === v.indexRange.rank && v.indexRange.contains(p.point);
  }

  function setPick(p: Pick): void {
    pick = p;
    if (pickSelect) pickSelect.value = p.kind === "application" ? p.id : "";
    redraw();
  }

  function render(): void {
    const v = view!;
    title.textContent = `Index space · ${nodeById(doc!).get(v.opId)?.label ?? v.kernel}`;
    element.dataset.op = v.opId;
    element.dataset.custom = v.custom ? "1" : "";
    figures.clear();
    const parts: HTMLElement[] = [];
    const kernelLine = el(
      "p",
      { class: "geon-ipf-kernel small" },
      el("span", { class: "geon-kernel", text: v.kernel }),
      v.custom
        ? " · custom kernel: edit its projections below"
        : " · catalogue kernel: projections derived from the axes",
    );
    parts.push(kernelLine);
    const ir = v.indexRange;
    if (!ir) {
      parts.push(
        el("p", {
          class: "small",
          text: "This operation has no index space yet (no IPFIndex and no IndexAxes with lengths).",
        }),
      );
      body.replaceChildren(...parts);
      gridPaint = null;
      return;
    }
    // which index dims the grid shows; the others are held at a coordinate
    const rank = ir.rank;
    if (
      dims[1] >= rank ||
      dims[0] >= rank ||
      (rank >= 2 && dims[0] < 0) ||
      (rank >= 1 && dims[1] < 0)
    )
      dims = rank >= 2 ? [0, 1] : [-1, rank - 1];
    if (rank > 2) {
      const selector = (which: 0 | 1, label: string) => {
        const s = el("select", {
          class: `geon-ipf-dim geon-ipf-dim-${which ? "cols" : "rows"}`,
          "aria-label": `${label} of the index grid`,
        });
        v.indexAxes.forEach((a, d) => s.append(el("option", { value: String(d), text: a })));
        s.value = String(dims[which]);
        s.addEventListener("change", () => {
          const d = Number(s.value);
          const other = dims[1 - which]!;
          dims = which ? [other === d ? dims[1] : other, d] : [d, other === d ? dims[0] : other];
          render();
        });
        return s;
      };
      const held = el("span", { class: "geon-ipf-held small" });
      ir.start.forEach((lo, d) => {
        if (dims.includes(d)) return;
        const input = el("input", {
          type: "number",
          class: "geon-ipf-at",
          "data-dim": String(d),
          min: String(lo),
          max: String(ir.end[d]! - 1),
          "aria-label": `${v.indexAxes[d]} of the index point`,
        });
        input.value = String(pick.kind === "point" ? (pick.point[d] ?? lo) : lo);
        input.addEventListener("change", () => {
          const point = pick.kind === "point" ? [...pick.point] : [...ir.start];
          point[d] = Math.min(ir.end[d]! - 1, Math.max(lo, Math.round(Number(input.value) || lo)));
          setPick({ kind: "point", point });
        });
        held.append(` ${v.indexAxes[d]} =`, input);
      });
      parts.push(
        el(
          "div",
          { class: "geon-ipf-dims small" },
          "rows ",
          selector(0, "rows"),
          " columns ",
          selector(1, "columns"),
          held,
        ),
      );
    }
    const canvas = el("canvas", { class: "geon-ipf-grid", "aria-label": "index space grid" });
    gridPaint = sized(canvas, ir, dims, 330, 150);
    canvas.addEventListener("click", (e) => {
      const p = gridPaint!;
      const box = canvas.getBoundingClientRect();
      const col = Math.floor((e.clientX - box.left) / p.cw);
      const row = Math.floor((e.clientY - box.top) / p.ch);
      const base =
        pick.kind === "point" && pick.point.length === rank ? [...pick.point] : [...ir.start];
      if (p.dims[0] >= 0) base[p.dims[0]] = ir.start[p.dims[0]]! + row;
      if (p.dims[1] >= 0) base[p.dims[1]] = ir.start[p.dims[1]]! + col;
      if (ir.contains(base)) setPick({ kind: "point", point: base });
    });
    parts.push(
      rank === 0
        ? el("p", { class: "small", text: "The index space is a single point." })
        : framed(canvas, dims, v.indexAxes, ir),
    );
    pickSelect = el("select", {
      class: "geon-ipf-pick",
      "aria-label": "index point or application",
    });
    pickSelect.append(el("option", { value: "", text: "an index point (click a cell)" }));
    v.applications.forEach((a, i) =>
      pickSelect!.append(el("option", { value: a.id, text: `application ${i + 1} ${a.index}` })),
    );
    pickSelect.value = pick.kind === "application" ? pick.id : "";
    pickSelect.addEventListener("change", () => {
      const id = pickSelect!.value;
      if (id) {
        setPick({ kind: "application", id });
        cb.select?.(v.opId);
      } else setPick({ kind: "point", point: [...ir.start] });
    });
    pickedText = el("span", { class: "geon-ipf-picked" });
    parts.push(
      el("div", { class: "geon-ipf-pickrow small" }, "Show ", pickSelect, " ", pickedText),
    );
    for (const port of v.ports) parts.push(portFigure(v, port));
    error = el("p", { class: "geon-form-error geon-ipf-error", role: "alert" });
    parts.push(error);
    if (v.custom) {
      const commit = button(
        "Apply projection",
        "Send the edited projections as one undoable edit",
        () => apply(),
        "primary geon-ipf-commit",
      );
      const revert = button(
        "Revert",
        "Forget the edits not yet applied",
        () => {
          drafts = new Map();
          fields = new Map();
          render();
        },
        "geon-ipf-revert",
      );
      parts.push(el("div", { class: "geon-ipf-actions" }, commit, revert));
    }
    body.replaceChildren(...parts);
    redraw();
  }

  function portFigure(v: OperationProjection, port: PortProjection): HTMLElement {
    const holder = el("div", { class: "geon-ipf-map-holder" });
    const caption = el("div", { class: "geon-ipf-caption small" });
    const fig = el(
      "figure",
      {
        class: `geon-ipf-port ${port.side === "inputs" ? "input" : "output"}`,
        "data-key": port.key,
        "data-port": port.port,
        "data-side": port.side,
      },
      caption,
      holder,
    );
    figures.set(port.key, { fig, caption, holder });
    if (port.problem) fig.append(el("p", { class: "geon-form-error", text: port.problem }));
    if (v.custom && port.ipf) {
      const f = fields.get(port.key) ?? fieldsOf(drafts.get(port.key) ?? port.ipf!);
      fields.set(port.key, f);
      fig.append(ipfEditor(v, port, f, edited));
    } else if (port.ipf) fig.append(formula(v, port, port.ipf));
    return fig;
  }

  /** A field changed: the regions follow when every field of the port reads; else say which does not. */
  function edited(port: PortProjection, input: HTMLInputElement): void {
    try {
      drafts.set(port.key, parseFields(port, fields.get(port.key)!));
      input.removeAttribute("aria-invalid");
      figures
        .get(port.key)
        ?.fig.querySelectorAll("[aria-invalid]")
        .forEach((n) => n.removeAttribute("aria-invalid"));
      if (error) error.textContent = "";
    } catch (e) {
      input.setAttribute("aria-invalid", "true");
      if (error) error.textContent = (e as Error).message;
    }
    redraw();
  }

  function apply(): void {
    const v = view!;
    const next = new Map<string, IPF>();
    for (const port of v.ports) {
      const f = fields.get(port.key);
      if (!f) continue;
      try {
        next.set(port.key, parseFields(port, f));
      } catch (e) {
        error!.textContent = `refused: ${(e as Error).message}; nothing was changed`;
        return;
      }
    }
    const message = cb.commit(v.opId, next);
    error!.textContent = message ?? "";
  }

  function redraw(): void {
    const v = view;
    if (!v || !v.indexRange) return;
    const at = pickRange(v, pick);
    if (pickedText) {
      pickedText.textContent =
        pick.kind === "point"
          ? `point (${v.indexAxes.join(", ")}) = [${pick.point.join(", ")}]`
          : `${v.indexAxes.join(", ")} ${at ?? "?"}`;
    }
    element.dataset.pick = at ? `${at}` : "";
    if (gridPaint) drawGrid(v, gridPaint, at, pick);
    const shown = new Map(regions(v, pick, drafts).map((g) => [g.key, g]));
    for (const port of v.ports) drawPort(port, shown.get(port.key) ?? null, figures.get(port.key));
  }

  function show(d: LoomDocument, id: string, reset: boolean): void {
    const v = operationProjection(d, id);
    if (!v) {
      close();
      return;
    }
    if (reset || id !== opId) {
      drafts = new Map();
      fields = new Map();
      dims = [-1, -1];
    } else {
      // edits that were applied (or undone) replace the drafts: the document is the truth now
      drafts = new Map();
      fields = new Map();
    }
    opId = id;
    view = v;
    seen = watched(d, id);
    if (!pickValid(v, pick) || reset) pick = defaultPick(v);
    element.hidden = false;
    render();
  }

  return {
    element,
    get visible() {
      return !element.hidden;
    },
    open(id: string) {
      if (!doc) return;
      show(doc, id, true);
    },
    close,
    update(d, selected) {
      doc = d;
      if (element.hidden || !d) return;
      const nodes = nodeById(d);
      const one = selected.length === 1 ? nodes.get(selected[0]!) : undefined;
      const target = one?.type === OPERATION ? one.id : opId;
      if (!target || !nodes.has(target)) {
        close();
        return;
      }
      if (target !== opId) {
        show(d, target, true);
        return;
      }
      const now = watched(d, target);
      if (now.length !== seen.length || now.some((n, i) => n !== seen[i])) show(d, target, false);
    },
  };
}
