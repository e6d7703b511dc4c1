// The projection window of an operation: its index space as a grid of cells with the index
// axes' names on its sides (two dims shown; the others are held at a chosen coordinate), its
// applications as blocks on it, and per input and output a map of the tensor with the region that
// the chosen index point (click a cell) or application selects, the other applications' regions
// as bands (where input bands overlap, that is the halo) and, for a padded read, the footprint
// past the tensor's edge. For custom kernels the projection, offset and shape are fields: the
// regions follow as you type, and "Apply projection" sends one undoable edit. The window only
// renders what it is given (``model/projection.ts`` computes it; ``projectionMaps.ts`` draws the
// maps) and calls back.

import "./projection.css";
import { nodeById, OPERATION, type LoomDocument, type LoomNode } from "../model/document";
import type { IPF } from "../model/ipf";
import { ZRange } from "../model/ipf";
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
  type Region,
} from "../model/projection";
import { button, el } from "./dom";
import { hatch } from "./draw";
import {
  BANDS,
  framed,
  gridLines,
  highlight,
  hull,
  named,
  OVERLAP,
  PICK_LINE,
  rect,
  sized,
  tensorDims,
  type Dims,
  type Paint,
} from "./projectionMaps";

/** How a row of an IPF reads (beside every table of one). */
const LEGEND =
  "Each row is a dim of the tensor: at an index point it starts at Σ (number × that index axis) + offset and is shape cells long.";

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
  const figures = new Map<
    string,
    { fig: HTMLElement; caption: HTMLElement; holder: HTMLElement }
  >();

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
    if (v.custom && port.ipf) fig.append(ipfEditor(v, port));
    else if (port.ipf) fig.append(formula(v, port, port.ipf));
    return fig;
  }

  /** The IPF as a labelled table: per tensor dim, the coefficient of each index axis, the offset
   * and the shape, with the sentence that says how a row reads (issue 21: the notation explained). */
  function formula(v: OperationProjection, port: PortProjection, ipf: IPF): HTMLElement {
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
      const cells = [...row, ipf.offset[r]!, ipf.shape[r]!].map((n) =>
        el("td", { text: String(n) }),
      );
      table.append(el("tr", {}, el("th", { text: named(port.axes, r) }), ...cells));
    });
    return el("div", {}, table, el("p", { class: "geon-ipf-legend small muted", text: LEGEND }));
  }

  function ipfEditor(v: OperationProjection, port: PortProjection): HTMLElement {
    const f = fields.get(port.key) ?? fieldsOf(drafts.get(port.key) ?? port.ipf!);
    fields.set(port.key, f);
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
    if (gridPaint) drawGrid(v, gridPaint, at);
    const shown = new Map(regions(v, pick, drafts).map((g) => [g.key, g]));
    for (const port of v.ports) drawPort(port, shown.get(port.key) ?? null);
  }

  function drawGrid(v: OperationProjection, p: Paint, at: ZRange | null): void {
    const ctx = p.canvas.getContext("2d");
    if (!ctx) return;
    const w = parseFloat(p.canvas.style.width);
    const h = parseFloat(p.canvas.style.height);
    ctx.clearRect(0, 0, w, h);
    ctx.fillStyle = "#f8fafc";
    ctx.fillRect(0, 0, w, h);
    // the applications' blocks in the held slice (for a point pick) or all of them
    const point = pick.kind === "point" ? pick.point : null;
    const slice = (r: ZRange) =>
      !point ||
      r.start.every((s, d) => p.dims.includes(d) || (s <= point[d]! && point[d]! < r.end[d]!));
    v.applications.forEach((a, i) => {
      const box = slice(a.index) ? rect(p, a.index) : null;
      if (!box) return;
      ctx.fillStyle = BANDS[i % BANDS.length]!;
      ctx.fillRect(...box);
    });
    gridLines(ctx, p, w, h);
    v.applications.forEach((a) => {
      const box = slice(a.index) ? rect(p, a.index) : null;
      if (!box) return;
      ctx.strokeStyle = "#475569";
      ctx.lineWidth = 1.5;
      ctx.strokeRect(box[0] + 0.75, box[1] + 0.75, box[2] - 1.5, box[3] - 1.5);
    });
    const box = at ? rect(p, at) : null;
    if (box) highlight(ctx, box);
  }

  function drawPort(port: PortProjection, g: Region | null): void {
    const f = figures.get(port.key);
    if (!f) return;
    const verb = port.side === "inputs" ? "reads" : "writes";
    const axes = port.axes ? ` (${port.axes.join(", ")})` : "";
    const head = `${port.side === "inputs" ? "input" : "output"} ${port.port}: ${port.label}${axes}`;
    if (!g || !port.tensorRange || g.raw.rank !== port.tensorRange.rank) {
      f.caption.textContent = `${head} — no region to show`;
      f.holder.replaceChildren();
      f.fig.dataset.region = "";
      return;
    }
    const clipped = !g.raw.equals(g.region);
    const words = [`${head} ${verb} ${g.region}`];
    if (clipped) words.push(`(footprint ${g.raw}, clipped to the tensor ${port.tensorRange})`);
    if (g.overlaps.length)
      words.push(`· applications overlap (halo) ${g.overlaps.map(String).join(" ")}`);
    else if (g.shared) words.push("· the same for every application");
    f.caption.textContent = words.join(" ");
    f.fig.dataset.region = `${g.region}`;
    f.fig.dataset.raw = `${g.raw}`;
    f.fig.dataset.bands = g.bands.map((b) => `${b.region}`).join(" ");
    f.fig.dataset.overlaps = g.overlaps.map(String).join(" ");
    f.fig.classList.toggle("halo", g.overlaps.length > 0);
    const t = port.tensorRange;
    const extent = g.raw.isEmpty ? t : hull([t, g.raw]);
    const d = tensorDims(t, [g.raw, ...g.bands.map((b) => b.region)]);
    const canvas = el("canvas", { class: "geon-ipf-map", "aria-label": `region of ${port.label}` });
    const p = sized(canvas, extent, d, 320, 130);
    const ctx = canvas.getContext("2d");
    f.holder.replaceChildren(framed(canvas, d, port.axes, extent));
    if (!ctx) return;
    const w = parseFloat(canvas.style.width);
    const h = parseFloat(canvas.style.height);
    ctx.fillStyle = "#eef0f4";
    ctx.fillRect(0, 0, w, h);
    hatch(ctx, [0, 0, w, h], "rgba(100, 116, 139, 0.35)"); // past the tensor's edge: padding
    const tb = rect(p, t);
    if (tb) {
      ctx.fillStyle = "#f8fafc";
      ctx.fillRect(...tb);
    }
    g.bands.forEach((b, i) => {
      const box = rect(p, b.region);
      if (!box) return;
      ctx.fillStyle = BANDS[i % BANDS.length]!;
      ctx.fillRect(...box);
    });
    gridLines(ctx, p, w, h);
    g.bands.forEach((b) => {
      const box = rect(p, b.region);
      if (!box) return;
      ctx.strokeStyle = "#475569";
      ctx.lineWidth = 1;
      ctx.strokeRect(box[0] + 0.5, box[1] + 0.5, box[2] - 1, box[3] - 1);
    });
    if (tb) {
      ctx.strokeStyle = "#1d2430";
      ctx.lineWidth = 1;
      ctx.strokeRect(tb[0] + 0.5, tb[1] + 0.5, tb[2] - 1, tb[3] - 1);
    }
    const rb = rect(p, g.region);
    if (rb) highlight(ctx, rb);
    // the halo on top: cells that two applications with different regions both read
    for (const o of g.overlaps) {
      const box = rect(p, o);
      if (!box) continue;
      ctx.fillStyle = OVERLAP;
      ctx.fillRect(...box);
      ctx.strokeStyle = "#c2410c";
      ctx.lineWidth = 2;
      ctx.strokeRect(box[0] + 1, box[1] + 1, box[2] - 2, box[3] - 2);
    }
    const raw = clipped ? rect(p, g.raw) : null;
    if (raw) {
      ctx.save();
      ctx.setLineDash([4, 3]);
      ctx.strokeStyle = PICK_LINE;
      ctx.lineWidth = 1.5;
      ctx.strokeRect(raw[0] + 1, raw[1] + 1, raw[2] - 2, raw[3] - 2);
      ctx.restore();
    }
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
