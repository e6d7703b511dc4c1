// The schedule chart of a pipelined plan (issue 33): one row per device of the pipeline axis
// (its stages), time to the right, each microbatch's forward (F) and backward (B) pass a box
// labelled with its number, and the idle time between them, the bubble, hatched. Drawn from the
// cost JSON's "pipeline" (geon/core/plans/cost/pipelined.py): its grid of boxes, the schedule, the
// bubble and the step's seconds.

const SVG = "http://www.w3.org/2000/svg";

export interface ScheduleBox {
  device: number;
  stage: number;
  kind: "F" | "B";
  microbatch: number;
  start: number;
  end: number;
}

export interface PipelineCost {
  schedule: string;
  stages: number;
  devices?: number;
  microbatches: number;
  bubble: number;
  stageSeconds: number[];
  grid: ScheduleBox[];
  seconds?: number;
}

function svg<K extends keyof SVGElementTagNameMap>(
  tag: K,
  attrs: Record<string, string | number>,
  text?: string,
): SVGElementTagNameMap[K] {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  if (text !== undefined) node.textContent = text;
  return node;
}

/** Seconds as people read them: "12.5 µs", "3.20 ms", "1.50 s". */
export function seconds(s: number): string {
  if (s < 1e-3) return `${(s * 1e6).toFixed(1)} µs`;
  if (s < 1) return `${(s * 1e3).toFixed(2)} ms`;
  return `${s.toFixed(2)} s`;
}

/** One summary line: schedule, stages, microbatches, bubble and step time. */
export function scheduleSummary(p: PipelineCost): string {
  const step = p.seconds ?? Math.max(0, ...p.grid.map((b) => b.end));
  return `${p.schedule}: ${p.stages} stages, ${p.microbatches} microbatches, bubble ${(p.bubble * 100).toFixed(1)}% of a ${seconds(step)} step`;
}

export interface PlacedBox {
  box: ScheduleBox;
  x: number;
  y: number;
  width: number;
}

/** Where the chart draws each box: a row of ``row`` pixels per device, time scaled to the
 * plot (``left`` .. ``width - 8``); the step's end at the right edge. */
export function scheduleLayout(
  p: PipelineCost,
  width: number,
  left = 64,
  row = 26,
  top = 6,
): { devices: number; end: number; plot: number; height: number; boxes: PlacedBox[] } {
  const devices = p.devices ?? Math.max(1, ...p.grid.map((b) => b.device + 1));
  const end = p.seconds ?? Math.max(1e-12, ...p.grid.map((b) => b.end));
  const plot = width - left - 8;
  const x = (t: number): number => left + (t / end) * plot;
  const boxes = p.grid.map((box) => ({
    box,
    x: x(box.start),
    y: top + box.device * row,
    width: Math.max(0.5, x(box.end) - x(box.start)),
  }));
  return { devices, end, plot, height: top + devices * row + 22, boxes };
}

/** The idle fraction of each device's row: 1 - its boxes' width over the plot's. */
export function idleShares(p: PipelineCost, width = 640): number[] {
  const layout = scheduleLayout(p, width);
  const busy = new Array<number>(layout.devices).fill(0);
  for (const b of layout.boxes) busy[b.box.device] = (busy[b.box.device] ?? 0) + b.width;
  return busy.map((w) => 1 - w / layout.plot);
}

/** The stages device ``d`` runs ("0", or "1, 3" interleaved). */
function stagesOf(p: PipelineCost, d: number): string {
  return [...new Set(p.grid.filter((b) => b.device === d).map((b) => b.stage))]
    .sort((a, b) => a - b)
    .join(", ");
}

/** The chart (an SVG in a figure with its caption); ``width`` in pixels. */
export function renderSchedule(p: PipelineCost, width = 640): HTMLElement {
  const left = 56;
  const row = 30;
  const top = 6;
  const { devices, end, plot, height, boxes } = scheduleLayout(p, width, left, row, top);
  const chart = svg("svg", {
    class: "geon-schedule-chart",
    width,
    height,
    viewBox: `0 0 ${width} ${height}`,
    role: "img",
    "aria-label": scheduleSummary(p),
  });
  const defs = svg("defs", {});
  const hatch = svg("pattern", {
    id: "geon-bubble-hatch",
    width: 6,
    height: 6,
    patternUnits: "userSpaceOnUse",
    patternTransform: "rotate(45)",
  });
  hatch.append(
    svg("rect", { width: 6, height: 6, fill: "#f4f4f4" }),
    svg("line", { x1: 0, y1: 0, x2: 0, y2: 6, stroke: "#c9c9c9", "stroke-width": 2 }),
  );
  defs.append(hatch);
  chart.append(defs);
  for (let d = 0; d < devices; d++) {
    const y = top + d * row;
    // the whole row is the bubble's hatch; the boxes cover the busy time
    chart.append(
      svg("rect", {
        class: "geon-schedule-idle",
        x: left,
        y: y + 2,
        width: plot,
        height: row - 4,
        fill: "url(#geon-bubble-hatch)",
      }),
    );
    chart.append(
      svg(
        "text",
        { class: "geon-schedule-row", x: 4, y: y + row / 2 + 4, "font-size": 11 },
        `device ${d}`,
      ),
    );
    chart.lastElementChild?.append(
      svg("title", {}, `device ${d} of the pipeline axis: stages ${stagesOf(p, d)}`),
    );
  }
  const many = p.grid.length > 400;
  for (const { box: b, x, y, width: w } of boxes) {
    const box = svg("rect", {
      class: `geon-schedule-box geon-schedule-${b.kind === "F" ? "forward" : "backward"}`,
      x,
      y: y + 2,
      width: w,
      height: row - 4,
      "data-stage": b.stage,
      "data-microbatch": b.microbatch,
    });
    box.append(
      svg(
        "title",
        {},
        `${b.kind === "F" ? "forward" : "backward"} of microbatch ${b.microbatch} on stage ${b.stage}: ${seconds(b.start)} to ${seconds(b.end)}`,
      ),
    );
    chart.append(box);
    if (!many && w > 14)
      chart.append(
        svg(
          "text",
          {
            class: "geon-schedule-label",
            x: x + w / 2,
            y: y + row / 2 + 4,
            "text-anchor": "middle",
            "font-size": 10,
          },
          `${b.kind}${b.microbatch}`,
        ),
      );
  }
  const axisY = top + devices * row + 14;
  chart.append(
    svg("text", { x: left, y: axisY, "font-size": 10 }, "0"),
    svg("text", { x: left + plot, y: axisY, "font-size": 10, "text-anchor": "end" }, seconds(end)),
  );
  const legend = document.createElement("p");
  legend.className = "small muted geon-schedule-legend";
  legend.textContent = "F forward, B backward of each microbatch; hatched: idle (the bubble)";
  const caption = document.createElement("figcaption");
  caption.className = "small geon-schedule-caption";
  caption.textContent = scheduleSummary(p);
  const figure = document.createElement("figure");
  figure.className = "geon-schedule";
  figure.append(caption, chart, legend);
  return figure;
}
