// What the canvas draws over the layout beyond the document itself: the edge a ledger or Compare
// row showed (issue 35: "clicking a ledger or Compare row pans to the edge and highlights it"),
// highlighted while both its ends stay selected, and the current plan's pipeline stages (issue
// 33: "the editor draws the stages as bands over the groups"), one labelled translucent band per
// stage behind the groups it runs. Stage k runs the operations whose Group scope is one of
// stages[k]'s scopes or lies under one (by path components, as geon/core/plans/pipeline.py's
// ``scope_matches``); a band covers the groups drawn for them (a collapsed group holding such a
// scope too). A plan whose stages the cost model chooses ("balanced") names none: no bands.

import { groupPath, revealing, scopePath, within, type GroupShape } from "./groups";
import type { LiveLayout } from "./liveLayout";
import { bounds, showRect, toScreen, type Rect, type Viewport } from "./viewport";

export interface EdgeEnds {
  from: string;
  to: string;
}

/** The marks of one editor, kept with its layout (``LiveLayout.marks``). */
export class CanvasMarks {
  /** The edge last shown by a row: drawn highlighted while both ends are selected. */
  highlight: EdgeEnds | null = null;
  /** The current plan's pipeline stages (scopes per stage), or null. */
  stages: string[][] | null = null;
}

/** The stages of a saved plan's pipeline when it names them (null for none or "balanced"). */
export function namedStages(
  plan: { pipeline?: { stages: string[][] | "balanced" } | null } | null,
): string[][] | null {
  const stages = plan?.pipeline?.stages;
  return Array.isArray(stages) && stages.length ? stages : null;
}

export interface StageBand {
  stage: number;
  label: string;
  /** One rect per group of the stage drawn (the band is their union). */
  rects: Rect[];
}

const BAND_PAD = 12;

/** The band of each stage over what is drawn (``shapes``: the groups drawn); a stage with nothing drawn has none. */
export function stageBands(
  stages: readonly string[][],
  shapes: readonly GroupShape[],
  rects: ReadonlyMap<string, Rect>,
): StageBand[] {
  const bands: StageBand[] = [];
  stages.forEach((scopes, stage) => {
    const paths = scopes.flatMap((s) => [scopePath(s)].filter((p): p is string => p !== null));
    const held: Rect[] = [];
    for (const g of shapes) {
      const inStage = paths.some((p) => within(g.path, p) || (g.collapsed && within(p, g.path)));
      // a group drawn inside one the band holds already adds nothing
      const inner = g.parent !== null && paths.some((p) => within(groupPath(g.parent!), p));
      const r = rects.get(g.id);
      if (inStage && !inner && r)
        held.push({
          x: r.x - BAND_PAD,
          y: r.y - BAND_PAD,
          w: r.w + 2 * BAND_PAD,
          h: r.h + 2 * BAND_PAD,
        });
    }
    if (held.length) bands.push({ stage, label: `stage ${stage}`, rects: held });
  });
  return bands;
}

const BAND_COLOURS = [
  "rgba(31, 119, 180, 0.10)",
  "rgba(224, 138, 0, 0.12)",
  "rgba(44, 160, 44, 0.11)",
  "rgba(148, 103, 189, 0.11)",
];
const LABEL_COLOURS = ["#1f5f94", "#a05f00", "#237d23", "#6f4a94"];

/** What a browser test reads of the marks last drawn (``window.geonMarks``), in CSS px of the canvas. */
export interface MarksTestApi {
  bands(): { label: string; x: number; y: number; w: number; h: number }[];
  highlight(): (EdgeEnds & { x: number; y: number; w: number; h: number }) | null;
}

declare global {
  interface Window {
    geonMarks?: MarksTestApi;
  }
}

let drawn: { bands: StageBand[]; highlight: (EdgeEnds & { span: Rect }) | null; vp: Viewport } = {
  bands: [],
  highlight: null,
  vp: { scale: 1, dx: 0, dy: 0 },
};
if (typeof window !== "undefined")
  window.geonMarks ??= {
    bands: () =>
      drawn.bands.map((b) => ({ label: b.label, ...toScreen(bounds(b.rects), drawn.vp) })),
    highlight: () =>
      drawn.highlight
        ? {
            from: drawn.highlight.from,
            to: drawn.highlight.to,
            ...toScreen(drawn.highlight.span, drawn.vp),
          }
        : null,
  };

/** The bands, behind everything else (world transform set); labels in a fixed screen size. */
export function drawBands(
  ctx: CanvasRenderingContext2D,
  bands: readonly StageBand[],
  vp: Viewport,
): void {
  drawn = { ...drawn, bands: [...bands], vp };
  for (const band of bands) {
    const path = new Path2D();
    for (const r of band.rects) path.roundRect(r.x, r.y, r.w, r.h, 18);
    ctx.fillStyle = BAND_COLOURS[band.stage % BAND_COLOURS.length]!;
    ctx.fill(path, "nonzero");
    const first = band.rects.reduce((a, b) => (b.y < a.y || (b.y === a.y && b.x < a.x) ? b : a));
    const size = 13 / Math.max(vp.scale, 0.05);
    ctx.font = `700 ${size}px system-ui, sans-serif`;
    ctx.textAlign = "left";
    ctx.textBaseline = "bottom";
    ctx.fillStyle = LABEL_COLOURS[band.stage % LABEL_COLOURS.length]!;
    ctx.fillText(band.label, first.x + 6 / vp.scale, first.y - 3 / vp.scale);
  }
}

/** The shown edge, under the boxes: a wide amber stroke along its path while both ends are selected. */
export function drawHighlight(
  ctx: CanvasRenderingContext2D,
  ends: EdgeEnds | null,
  selected: ReadonlySet<string>,
  rects: ReadonlyMap<string, Rect>,
  vp: Viewport,
  path: (a: Rect, b: Rect) => void,
): void {
  const a =
    ends && selected.has(ends.from) && selected.has(ends.to) ? rects.get(ends.from) : undefined;
  const b = ends ? rects.get(ends.to) : undefined;
  drawn = { ...drawn, highlight: ends && a && b ? { ...ends, span: bounds([a, b]) } : null, vp };
  if (!a || !b) return;
  ctx.beginPath();
  path(a, b);
  ctx.lineCap = "round";
  ctx.strokeStyle = "rgba(245, 183, 0, 0.55)";
  ctx.lineWidth = 12 / Math.max(vp.scale, 0.05);
  ctx.stroke();
  ctx.lineCap = "butt";
}

/** What showing an edge reads and moves (the editor). */
export interface EdgeHost {
  readonly live: LiveLayout;
  readonly groups: {
    set(next: Set<string>, target: readonly string[]): void;
    aim(ids: readonly string[]): void;
  };
  vp: Viewport;
  size(): { width: number; height: number };
  setSelection(ids: string[]): void;
  invalidate(): void;
}

/**
 * Show an edge (its two ends; one when only one is in the document): select both, highlight the
 * edge, and pan to it (zoomed to read, fitted when longer than the view). Ends hidden in collapsed
 * groups are revealed first, and the view centres once the layout arrives; so it does again when
 * a layout is on its way (a new version's boxes), which may move the ends.
 */
export function focusEdge(host: EdgeHost, ids: string[]): void {
  const { live } = host;
  live.marks.highlight = ids.length === 2 ? { from: ids[0]!, to: ids[1]! } : null;
  host.setSelection(ids);
  const { tree, grouped } = live;
  if (tree && grouped && ids.some((id) => grouped.hiddenIn.has(id))) {
    host.groups.set(
      ids.reduce((collapsed, id) => revealing(tree, id, collapsed), new Set(live.collapsed)),
      ids,
    );
    return;
  }
  const held = ids.flatMap((id) =>
    [live.layout.rects.get(id)].filter((r): r is Rect => r !== undefined),
  );
  const { width, height } = host.size();
  if (held.length) host.vp = showRect(host.vp, bounds(held), width, height);
  if (!live.complete) host.groups.aim(ids);
  host.invalidate();
}
