// "Explain step by step" (issue 19, item 1): a dialog that runs one operation's index loops on
// small sample values. The formula and why its axes come out so on top; each operand and the
// result as grids (the last two axes longer than 1 shown; a slider for each other axis follows
// the current step's cell until moved), the cells read highlighted (a conv's window too; a read
// in its padding is 0), the term, the accumulator and the cell written; play, pause, step, step
// back, scrub and the loop order; beside it the same loops as Python (the body line
// highlighted), einsum and builder code. Keys: space plays, arrows step, Home / End.

import "./stepper.css";
import { declaredAxes, nodeById, nodeName, selections, type LoomDocument } from "../model/document";
import { refLength } from "../model/axes";
import { inferOperation } from "../model/derive";
import { permutations } from "../model/orders";
import { button, el } from "../ui/dom";
import { inside, loopsOf, steps, valueAt, type Loops, type Step } from "./loops";
import { builder, einsum, explanation, formula, pythonLoops } from "./notation";

/** The loops of an operation of ``doc``, or the sentence saying why there are none. */
export function loopsOfNode(doc: LoomDocument, opId: string): Loops | string {
  const nodes = nodeById(doc);
  const op = nodes.get(opId);
  if (!op) return "that operation is not in the graph any more";
  const kernel = String(op.body.kernel);
  const inf = inferOperation(doc, op);
  if (inf.kind !== "ok")
    return inf.kind === "error"
      ? `fix it first: ${inf.message}`
      : `stepping through ${kernel} is not available yet`;
  const named = (id: string) => {
    const node = nodes.get(id);
    return node ? nodeName(node) : id;
  };
  const labels = [...selections(op.body.inputs).values()].flatMap((list) =>
    list.map((s) => named(s.tensorId)),
  );
  const outputs = [...selections(op.body.outputs).values()].flat();

  const declared = declaredAxes(doc);
  try {
    return loopsOf(
      kernel,
      inf,
      labels,
      outputs[0] ? named(outputs[0].tensorId) : "result",
      (ref) => refLength(ref, declared) ?? 1,
    );
  } catch (e) {
    return e instanceof Error ? e.message : String(e);
  }
}

/** The two dims a tensor's grid shows: the last two longer than 1 (else its last two). */
export function shownDims(shape: number[]): number[] {
  const long = shape.flatMap((n, d) => (n > 1 ? [d] : []));
  const last = shape.map((_, d) => d);
  return (long.length >= 2 ? long : last).slice(-2);
}

type Cell = (cell: number[]) => string;

/** One tensor's grid: its ``shownDims`` as rows and columns; every other axis (longer than 1) has a
 * slider that follows the current step's cell until the person moves it ("follow the step" lets go). */
function tensorGrid(
  title: string,
  axes: string[],
  shape: number[],
): { element: HTMLElement; update(at: number[], text: Cell, mark: Cell): void } {
  const shown = shownDims(shape);
  const [rowDim, colDim] = shown.length === 2 ? shown : [null, shown[0] ?? null];
  const pinned = new Map<number, number>();
  const table = el("table", { class: "geon-stepper-grid" });
  const caption = el("figcaption", {});
  const follow = button(
    "follow the step",
    "Show the slice the current step reads again",
    () => {
      pinned.clear();
      redraw();
    },
    "geon-stepper-follow",
  );
  const sliders = axes.flatMap((a, d) => {
    if (shown.includes(d) || shape[d]! < 2) return [];
    const input = el("input", {
      type: "range",
      min: "0",
      max: String(shape[d]! - 1),
      value: "0",
      "aria-label": `${title}: ${a}`,
    });
    input.addEventListener("input", () => {
      pinned.set(d, Number(input.value));
      redraw();
    });
    return [
      { d, input, label: el("label", { class: "geon-stepper-slice small" }, `${a} `, input) },
    ];
  });
  let last: [number[], Cell, Cell] = [[], () => "", () => ""];
  function redraw(): void {
    const [at, text, mark] = last;
    const fixed = axes.map((_, d) => pinned.get(d) ?? at[d] ?? 0);
    const rows = rowDim === null ? 1 : shape[rowDim]!;
    const cols = colDim === null ? 1 : shape[colDim]!;
    table.replaceChildren();
    // labelled as NumPy prints them (issue 36): the last axis shown along the columns, the one
    // before it along the rows, each header "name=index"
    const colName = colDim === null ? "" : axes[colDim]!;
    const rowName = rowDim === null ? "" : axes[rowDim]!;
    table.append(
      el(
        "tr",
        {},
        el("th", {
          class: "geon-stepper-corner",
          text: rowName && colName ? `${rowName}↓ ${colName}→` : colName ? `${colName}→` : "",
        }),
        ...Array.from({ length: cols }, (_, c) =>
          el("th", { class: "geon-stepper-head-col", text: colName ? `${colName}=${c}` : "" }),
        ),
      ),
    );
    for (let r = 0; r < rows; r++) {
      const tr = el(
        "tr",
        {},
        el("th", { class: "geon-stepper-head-row", text: rowName ? `${rowName}=${r}` : "" }),
      );
      for (let c = 0; c < cols; c++) {
        const cell = fixed.map((i, d) => (d === rowDim ? r : d === colDim ? c : i));
        tr.append(el("td", { class: `geon-stepper-cell ${mark(cell)}`, text: text(cell) }));
      }
      table.append(tr);
    }
    for (const { d, input } of sliders) input.value = String(fixed[d]);
    const rest = axes.flatMap((a, d) => (shown.includes(d) ? [] : [`${a}=${fixed[d]}`]));
    caption.textContent = `${title} (${axes.join(", ")})${rest.length ? ` at ${rest.join(", ")}` : ""}`;
    follow.hidden = pinned.size === 0;
  }
  const element = el(
    "figure",
    { class: "geon-stepper-tensor" },
    caption,
    table,
    ...(sliders.length
      ? [el("div", { class: "geon-stepper-slices" }, ...sliders.map((x) => x.label), follow)]
      : []),
  );
  return {
    element,
    update(at, text, mark) {
      last = [at, text, mark];
      redraw();
    },
  };
}

export interface Stepper {
  element: HTMLDialogElement;
  show(): void;
}

/** The dialog for operation ``opId`` of ``doc``. */
export function createStepper(
  doc: LoomDocument,
  opId: string,
  onClose: () => void = () => undefined,
): Stepper {
  const found = loopsOfNode(doc, opId);
  const close = button("Close", "Close (Escape)", () => element.close());
  const element = el("dialog", {
    class: "geon-dialog geon-stepper",
    "aria-label": "Explain step by step",
  });
  element.addEventListener("close", () => {
    stop();
    element.remove();
    onClose();
  });
  if (typeof found === "string") {
    element.append(
      el("div", { class: "geon-stepper-head" }, el("h2", { text: "Explain step by step" }), close),
      el("p", { class: "geon-form-error", text: found }),
    );
    document.body.append(element);
    return { element, show: () => element.showModal() };
  }
  const loops: Loops = found;
  let order = loops.axes.map((a) => a.name);
  let all: Step[] = steps(loops, order);
  let at = 0;
  let timer = 0;
  const counter = el("span", { class: "geon-stepper-step", role: "status" });
  const scrub = el("input", {
    type: "range",
    min: "0",
    value: "0",
    "aria-label": "step",
    class: "geon-stepper-scrub",
  });
  const play = button("▶ Play", "Play (space)", () => (timer ? stop() : start()), "primary");
  const orderSelect = el("select", { "aria-label": "loop order", class: "geon-stepper-order" });
  const orders = permutations(loops.axes.map((a) => a.name)).slice(0, 24);
  for (const o of orders)
    orderSelect.append(el("option", { value: o.join(","), text: `loops: ${o.join(" → ")}` }));
  orderSelect.addEventListener("change", () => {
    order = orderSelect.value.split(",");
    all = steps(loops, order);
    at = 0;
    render();
  });
  const tensors = [...loops.operands, loops.result].map((t) =>
    tensorGrid(t.label, t.axes, t.shape),
  );
  const grids = el("div", { class: "geon-stepper-grids" }, ...tensors.map((t) => t.element));
  const now = el("p", { class: "geon-stepper-now" });
  const code = el("pre", { class: "geon-stepper-code" });
  const other = el("div", { class: "geon-stepper-other small" });
  element.append(
    el(
      "div",
      { class: "geon-stepper-head" },
      el("h2", { text: `Explain: ${loops.result.label}` }),
      close,
    ),
    el("p", { class: "geon-stepper-formula", text: formula(loops) }),
    el(
      "ul",
      { class: "geon-stepper-why small" },
      ...explanation(loops).map((t) => el("li", { text: t })),
    ),
    el(
      "div",
      { class: "geon-stepper-controls" },
      button("|◀", "First step (Home)", () => go(0)),
      button("◀", "Step back (←)", () => go(at - 1)),
      play,
      button("▶", "Step (→)", () => go(at + 1)),
      button("▶|", "Last step (End)", () => go(all.length - 1)),
      scrub,
      counter,
      orderSelect,
    ),
    el(
      "div",
      { class: "geon-stepper-body" },
      el(
        "div",
        {},
        grids,
        now,
        el("p", {
          class: "small muted",
          text: "The operands hold small sample values (1 to 5), the same every time; a run uses the graph's own.",
        }),
      ),
      el("div", {}, code, other),
    ),
  );

  function render(): void {
    const step = all[at]!;
    scrub.max = String(all.length - 1);
    scrub.value = String(at);
    counter.textContent = `step ${at + 1} of ${all.length}`;
    const sofar = partialSums(all, at);
    loops.operands.forEach((o, k) =>
      tensors[k]!.update(
        step.reads[k]!,
        (c) => String(valueAt(k, c, o.shape)),
        (c) => (c.join(",") === step.reads[k]!.join(",") ? "read" : ""),
      ),
    );
    const cellOf = (c: number[]) => sofar.get(c.join(","));
    tensors.at(-1)!.update(
      step.cell,
      (c) => (cellOf(c) === undefined ? "" : String(round(cellOf(c)!.value))),
      (c) =>
        step.writes && c.join(",") === step.writes.join(",")
          ? "written"
          : c.join(",") === step.cell.join(",")
            ? "accumulating"
            : cellOf(c)?.complete === false
              ? "partial"
              : "",
    );
    const index = Object.entries(step.index)
      .map(([k, v]) => `${k}=${v}`)
      .join(", ");
    const reads = loops.operands
      .map(
        (o, k) =>
          `${o.label}[${step.reads[k]!.join(", ")}] = ${step.values[k]}${inside(step.reads[k]!, o.shape) ? "" : " (padding)"}`,
      )
      .join(", ");
    now.textContent = `${index}: ${reads}; term ${step.term}, so far ${round(step.acc)}${step.writes ? ` → ${loops.result.label}[${step.writes.join(", ")}] = ${round(step.acc)}` : ""}`;
    const lines = pythonLoops(loops, order);
    code.replaceChildren(
      ...lines.map((line, i) =>
        el("span", { class: i === lines.length - 1 ? "current" : "", text: `${line}\n` }),
      ),
    );
    const sum = einsum(loops);
    other.replaceChildren(
      ...(sum ? [el("p", {}, el("b", { text: "NumPy: " }), el("code", { text: sum }))] : []),
      el("p", {}, el("b", { text: "geon: " }), el("code", { text: builder(loops) })),
    );
  }

  function go(n: number): void {
    at = Math.max(0, Math.min(all.length - 1, n));
    render();
  }

  function start(): void {
    play.textContent = "❚❚ Pause";
    timer = window.setInterval(() => {
      if (at >= all.length - 1) stop();
      else go(at + 1);
    }, 450);
  }

  function stop(): void {
    window.clearInterval(timer);
    timer = 0;
    play.textContent = "▶ Play";
  }

  scrub.addEventListener("input", () => go(Number(scrub.value)));
  element.addEventListener("keydown", (e) => {
    if ((e.target as HTMLElement).closest("select, input")) return; // they use the arrows themselves
    const moves: Record<string, () => void> = {
      ArrowRight: () => go(at + 1),
      ArrowLeft: () => go(at - 1),
      Home: () => go(0),
      End: () => go(all.length - 1),
      " ": () => (timer ? stop() : start()),
    };
    const move = moves[e.key];
    if (move) {
      e.preventDefault();
      move();
    }
  });
  render();
  document.body.append(element);
  return { element, show: () => element.showModal() };
}

/** Every result cell touched by step ``at``: its sum so far and whether it is complete. In an
 * order with a reduced axis outside (``for w: for h: for n``) every cell holds a partial sum
 * that grows on each pass, drawn as it accumulates (issue 36). */
export function partialSums(
  all: readonly { cell: number[]; acc: number; writes: number[] | null }[],
  at: number,
): Map<string, { value: number; complete: boolean }> {
  const out = new Map<string, { value: number; complete: boolean }>();
  for (const s of all.slice(0, at + 1))
    out.set(s.cell.join(","), { value: s.acc, complete: s.writes !== null });
  return out;
}

function round(v: number): number {
  return Math.round(v * 1000) / 1000;
}
