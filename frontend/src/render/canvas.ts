// Drawing: reads a scene (view, layout, viewport, selection, issues, the tool's preview, who else
// is here) and paints it. It changes nothing. Boxes outside the view are skipped, and when
// zoomed far out boxes are drawn as plain shapes batched by colour, so a graph of thousands of
// nodes pans smoothly.

import type { Box, GraphView, Issue, Point } from "../model/document";
import { dragOffset, type Tool } from "../tools/tools";
import { drawBundled, drawCollapsed, drawFrames, type SceneGroups } from "./groupPaint";
import { chipWidth, type Layout } from "./layout";
import { intersects, toWorld, type Rect, type Viewport } from "./viewport";
import { drawFarPins, drawPin } from "./pins";
import { drawBands, drawHighlight, stageBands, type CanvasMarks } from "./marks";
import { BACK_STUB, backEdgeRunY, isBackEdge } from "./routes";

export const COLORS = {
  background: "#f6f7fa",
  grid: "#e8ebf1",
  tensorFill: "#e3edfd",
  tensorStroke: "#2f6fde",
  operationFill: "#fff1dc",
  operationStroke: "#c7781a",
  selected: "#0b57d0",
  issueStroke: "#d92d20",
  issueFill: "#fde8e7",
  edge: "#7a8599",
  wire: "#0b57d0",
  text: "#1d2430",
  subtext: "#5b6677",
  search: "#f5b700",
  collective: "#7c3aed",
} as const;

/** One colour per axis, by order of declaration (the same on every client). */
export const AXIS_PALETTE = [
  "#1f77b4",
  "#d6462b",
  "#2ca02c",
  "#9467bd",
  "#e08a00",
  "#17becf",
  "#c2417f",
  "#6b7d12",
  "#8c564b",
  "#4a5bd6",
];

export function axisColor(axis: string, order: readonly string[]): string {
  const i = order.indexOf(axis);
  return i < 0 ? "#8a94a6" : AXIS_PALETTE[i % AXIS_PALETTE.length]!;
}

export interface PresenceMark {
  user: string;
  color: string;
  selection: string[];
}

/** An edge that carries collectives under the document's current plan (ui/costs.ts). */
export interface EdgeLabel {
  text: string;
  /** Stroke width in screen pixels at scale 1, growing with the bytes moved. */
  width: number;
  bytes: number;
}

export interface Scene {
  view: GraphView;
  layout: Layout;
  vp: Viewport;
  size: { width: number; height: number };
  selected: ReadonlySet<string>;
  issues: ReadonlyMap<string, Issue[]>;
  /** Axis references named by the issues of each node: their chips are outlined in red. */
  issueAxes: ReadonlyMap<string, ReadonlySet<string>>;
  axisOrder: readonly string[];
  tool: Tool;
  presence: readonly PresenceMark[];
  found: ReadonlySet<string>;
  /** Edges carrying collectives, by "tensor->operation" (empty without a current plan). */
  collectives: ReadonlyMap<string, EdgeLabel>;
  /** Groups by name scope (render/groups.ts), when the graph has any. */
  groups?: SceneGroups;
  /** The review shown: unresolved threads per node, drawn as a pin at the box's top left. */
  pins?: ReadonlyMap<string, number>;
  /** The edge a row showed and the current plan's pipeline stages (render/marks.ts). */
  marks?: CanvasMarks;
}

const DETAIL_SCALE = 0.45;
/** Between this and DETAIL_SCALE, boxes are plain shapes with their titles in a fixed screen size. */
const TITLE_SCALE = 0.26;

function rectOf(scene: Scene, id: string): Rect | undefined {
  const r = scene.layout.rects.get(id);
  if (!r) return undefined;
  const off = dragOffset(scene.tool, id);
  return off ? { x: r.x + off.x, y: r.y + off.y, w: r.w, h: r.h } : r;
}

export function visibleWorld(scene: Scene): Rect {
  const a = toWorld({ x: 0, y: 0 }, scene.vp);
  const b = toWorld({ x: scene.size.width, y: scene.size.height }, scene.vp);
  return { x: a.x - 20, y: a.y - 20, w: b.x - a.x + 40, h: b.y - a.y + 40 };
}

/**
 * An edge from ``a``'s right side to ``b``'s left side: a curve when ``b`` lies ahead; when it lies
 * behind, the route of ``render/routes.ts`` with its horizontal run at ``runY``.
 */
export function edgePath(
  ctx: CanvasRenderingContext2D,
  a: Rect,
  b: Rect,
  detailed: boolean,
  runY?: number,
): void {
  const x0 = a.x + a.w;
  const y0 = a.y + a.h / 2;
  const x1 = b.x;
  const y1 = b.y + b.h / 2;
  ctx.moveTo(x0, y0);
  if (runY !== undefined) {
    const points: [number, number][] = [
      [x0 + BACK_STUB, y0],
      [x0 + BACK_STUB, runY],
      [x1 - BACK_STUB, runY],
      [x1 - BACK_STUB, y1],
      [x1, y1],
    ];
    const radius = detailed ? Math.min(10, Math.abs(runY - y0) / 2, Math.abs(y1 - runY) / 2) : 0;
    for (let i = 0; i < points.length - 1; i++) {
      const [px, py] = points[i]!;
      const [nx, ny] = points[i + 1]!;
      if (radius > 0) ctx.arcTo(px, py, nx, ny, radius);
      else ctx.lineTo(px, py);
    }
    ctx.lineTo(x1, y1);
    return;
  }
  if (detailed) {
    const c = Math.max(30, Math.abs(x1 - x0) / 2);
    ctx.bezierCurveTo(x0 + c, y0, x1 - c, y1, x1, y1);
  } else ctx.lineTo(x1, y1);
}

interface EdgeText {
  text: string;
  x: number;
  y: number;
}

/** Edges that carry collectives, over the plain ones: thicker with their bytes and in the
 * collective colour; close up, where their labels go (drawn over the boxes, see below). */
function drawCollectives(
  ctx: CanvasRenderingContext2D,
  scene: Scene,
  seen: Rect,
  detailed: boolean,
): EdgeText[] {
  const scale = Math.max(scene.vp.scale, 0.5);
  const labels: EdgeText[] = [];
  ctx.strokeStyle = COLORS.collective;
  for (const e of scene.view.edges) {
    const label = scene.collectives.get(`${e.from}->${e.to}`);
    const a = rectOf(scene, e.from);
    const b = rectOf(scene, e.to);
    if (!label || !a || !b) continue;
    if (
      !intersects(
        {
          x: Math.min(a.x, b.x),
          y: Math.min(a.y, b.y),
          w: Math.abs(b.x - a.x) + b.w + a.w,
          h: Math.abs(b.y - a.y) + b.h + a.h,
        },
        seen,
      )
    )
      continue;
    ctx.beginPath();
    edgePath(
      ctx,
      a,
      b,
      detailed,
      isBackEdge(a, b) ? backRunY(scene, e.from, e.to, a, b) : undefined,
    );
    ctx.lineWidth = label.width / scale;
    ctx.stroke();
    // above the middle of the edge, clear of the boxes' rows
    if (detailed)
      labels.push({ text: label.text, x: (a.x + a.w + b.x) / 2, y: Math.min(a.y, b.y) - 14 });
  }
  return labels;
}

/** The collective labels, in pill shapes, over everything else. */
function drawEdgeLabels(ctx: CanvasRenderingContext2D, labels: readonly EdgeText[]): void {
  if (!labels.length) return;
  ctx.font = "600 11px system-ui, sans-serif";
  ctx.textAlign = "center";
  ctx.textBaseline = "middle";
  for (const { text, x, y } of labels) {
    const w = ctx.measureText(text).width + 12;
    ctx.fillStyle = "#f5f3ff";
    ctx.strokeStyle = COLORS.collective;
    ctx.lineWidth = 1;
    ctx.beginPath();
    ctx.roundRect(x - w / 2, y - 10, w, 20, 6);
    ctx.fill();
    ctx.stroke();
    ctx.fillStyle = "#5b21b6";
    ctx.fillText(text, x, y);
  }
  ctx.textAlign = "start";
  ctx.textBaseline = "alphabetic";
}

function arrowHead(ctx: CanvasRenderingContext2D, b: Rect): void {
  const x = b.x;
  const y = b.y + b.h / 2;
  ctx.moveTo(x, y);
  ctx.lineTo(x - 8, y - 4.5);
  ctx.lineTo(x - 8, y + 4.5);
  ctx.closePath();
}

interface Placed {
  box: Box;
  r: Rect;
}

/**
 * The boxes in view, drawn in passes that each set a style once: shapes by style, then titles,
 * subtitles, axis chips by colour, chip labels, handles, and last the few overlays (issues,
 * selection, presence, search). Switching fonts and styles per box is what makes a canvas slow.
 */
function drawDetailed(ctx: CanvasRenderingContext2D, scene: Scene, placed: Placed[]): void {
  const shapes = new Map<string, Path2D>();
  const shape = (key: string): Path2D => {
    let path = shapes.get(key);
    if (!path) shapes.set(key, (path = new Path2D()));
    return path;
  };
  for (const { box, r } of placed) {
    const key = scene.issues.has(box.id) ? "issue" : box.kind;
    shape(key).roundRect(r.x, r.y, r.w, r.h, box.kind === "tensor" ? 5 : 14);
  }
  const styles: Record<string, [string, string, number]> = {
    tensor: [COLORS.tensorFill, COLORS.tensorStroke, 1.5],
    operation: [COLORS.operationFill, COLORS.operationStroke, 1.5],
    issue: [COLORS.issueFill, COLORS.issueStroke, 2.5],
  };
  for (const [key, path] of shapes) {
    const [fill, stroke, width] = styles[key]!;
    ctx.fillStyle = fill;
    ctx.fill(path);
    ctx.lineWidth = width;
    ctx.strokeStyle = stroke;
    ctx.stroke(path);
  }

  // titles
  ctx.fillStyle = COLORS.text;
  ctx.textBaseline = "middle";
  ctx.font = "600 14px system-ui, sans-serif";
  const titleWidth = new Map<string, number>();
  for (const { box, r } of placed) {
    if (box.kind === "tensor") {
      ctx.textAlign = "left";
      ctx.fillText(box.title, r.x + 10, r.y + 16, r.w - 20);
      titleWidth.set(box.id, Math.min(ctx.measureText(box.title).width, r.w - 20));
    } else {
      ctx.textAlign = "center";
      // a sharded operation says how many applications it has under its title
      const sharded = box.subtitle !== "whole" && r.h >= 40;
      ctx.fillText(box.title, r.x + r.w / 2, r.y + r.h / 2 - (sharded ? 7 : 0), r.w - 16);
    }
  }
  // subtitles
  ctx.fillStyle = COLORS.subtext;
  ctx.font = "12px system-ui, sans-serif";
  ctx.textAlign = "left";
  ctx.textAlign = "center";
  for (const { box, r } of placed) {
    if (box.kind === "operation" && box.subtitle !== "whole" && r.h >= 40)
      ctx.fillText(box.subtitle, r.x + r.w / 2, r.y + r.h / 2 + 10, r.w - 16);
  }
  ctx.textAlign = "left";
  for (const { box, r } of placed) {
    if (box.kind !== "tensor") continue;
    const tw = titleWidth.get(box.id) ?? 0;
    ctx.fillText(box.subtitle, r.x + 16 + tw, r.y + 16, Math.max(0, r.w - 30 - tw));
  }
  // axis chips: pills by colour, outlines where an issue names the axis, then the labels
  const pills = new Map<string, Path2D>();
  const bad = new Path2D();
  const labels: [string, number, number][] = [];
  for (const { box, r } of placed) {
    let x = r.x + 10;
    const y = r.y + r.h - 24;
    const flagged = scene.issueAxes.get(box.id);
    for (const chip of box.chips) {
      const w = chipWidth(chip.ref, chip.length);
      if (x + w > r.x + r.w - 6) break;
      const colour = axisColor(chip.axis.split("*")[0] ?? chip.axis, scene.axisOrder);
      let pill = pills.get(colour);
      if (!pill) pills.set(colour, (pill = new Path2D()));
      pill.roundRect(x, y, w, 17, 8.5);
      if (flagged?.has(chip.ref) || flagged?.has(chip.axis)) bad.roundRect(x, y, w, 17, 8.5);
      labels.push([`${chip.ref} ${chip.length ?? "?"}`, x + 8, y + 9]);
      x += w + 4;
    }
  }
  for (const [colour, pill] of pills) {
    ctx.fillStyle = colour;
    ctx.fill(pill);
  }
  ctx.lineWidth = 2.5;
  ctx.strokeStyle = COLORS.issueStroke;
  ctx.stroke(bad);
  ctx.font = "600 11px ui-monospace, SFMono-Regular, Menlo, monospace";
  ctx.fillStyle = "#fff";
  for (const [text, x, y] of labels) ctx.fillText(text, x, y);
  // the handles to drag a connection from
  const handles = new Path2D();
  for (const { box, r } of placed) {
    if (box.kind !== "tensor") continue;
    handles.moveTo(r.x + r.w + 5, r.y + r.h / 2);
    handles.arc(r.x + r.w, r.y + r.h / 2, 5, 0, Math.PI * 2);
  }
  ctx.fillStyle = "#fff";
  ctx.fill(handles);
  ctx.lineWidth = 1.5;
  ctx.strokeStyle = COLORS.tensorStroke;
  ctx.stroke(handles);

  for (const { box, r } of placed) drawOverlays(ctx, scene, box, r);
}

/** What marks one box beyond its shape: search hit, selection, others' selections, issue badge. */
function drawOverlays(ctx: CanvasRenderingContext2D, scene: Scene, box: Box, r: Rect): void {
  if (scene.found.has(box.id)) {
    ctx.lineWidth = 4;
    ctx.strokeStyle = COLORS.search;
    ctx.beginPath();
    ctx.roundRect(r.x - 5, r.y - 5, r.w + 10, r.h + 10, 9);
    ctx.stroke();
  }
  if (scene.selected.has(box.id)) {
    ctx.lineWidth = 2.5;
    ctx.strokeStyle = COLORS.selected;
    ctx.setLineDash([6, 3]);
    ctx.beginPath();
    ctx.roundRect(r.x - 3.5, r.y - 3.5, r.w + 7, r.h + 7, 8);
    ctx.stroke();
    ctx.setLineDash([]);
  }
  let ring = 7;
  for (const p of scene.presence) {
    if (!p.selection.includes(box.id)) continue;
    ctx.lineWidth = 2;
    ctx.strokeStyle = p.color;
    ctx.beginPath();
    ctx.roundRect(r.x - ring, r.y - ring, r.w + 2 * ring, r.h + 2 * ring, 10);
    ctx.stroke();
    ctx.fillStyle = p.color;
    ctx.font = "600 11px system-ui, sans-serif";
    ctx.textAlign = "left";
    ctx.textBaseline = "bottom";
    ctx.fillText(p.user, r.x - ring, r.y - ring - 2);
    ring += 4;
  }
  const pins = scene.pins?.get(box.id);
  if (pins) drawPin(ctx, r.x + 2, r.y + 2, pins);
  const issues = scene.issues.get(box.id);
  if (issues) {
    const cx = r.x + r.w - 2;
    const cy = r.y + 2;
    ctx.beginPath();
    ctx.arc(cx, cy, 10, 0, Math.PI * 2);
    ctx.fillStyle = COLORS.issueStroke;
    ctx.fill();
    ctx.fillStyle = "#fff";
    ctx.font = "700 11px system-ui, sans-serif";
    ctx.textAlign = "center";
    ctx.textBaseline = "middle";
    ctx.fillText(issues.length > 9 ? "9+" : String(issues.length), cx, cy + 0.5);
  }
}

/** Titles in a fixed 11px screen font over the plain shapes of a zoomed-out view. */
function drawTitles(ctx: CanvasRenderingContext2D, scene: Scene, ratio: number, seen: Rect): void {
  const { vp } = scene;
  ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
  ctx.font = "600 11px system-ui, sans-serif";
  ctx.textAlign = "center";
  ctx.textBaseline = "middle";
  ctx.fillStyle = COLORS.text;
  for (const box of scene.view.boxes) {
    const r = rectOf(scene, box.id);
    if (!r || !intersects(r, seen)) continue;
    ctx.fillText(
      box.title,
      vp.dx + (r.x + r.w / 2) * vp.scale,
      vp.dy + (r.y + r.h / 2) * vp.scale,
      r.w * vp.scale - 4,
    );
  }
  ctx.setTransform(vp.scale * ratio, 0, 0, vp.scale * ratio, vp.dx * ratio, vp.dy * ratio);
}

/** Paint the whole scene. Returns how many boxes were drawn (the rest were out of view). */
/** Back-edge runs per layout: found once among all boxes, again while a box is dragged. */
const backRuns = new WeakMap<Layout, Map<string, number>>();

/** What a back edge's run avoids: the boxes, not the frames of expanded groups (it may cross those); listed once per layout. */
const obstacleLists = new WeakMap<Layout, Rect[]>();
function obstacles(scene: Scene): Iterable<Rect> {
  let list = obstacleLists.get(scene.layout);
  const skip = list
    ? null
    : new Set(scene.groups?.shapes.flatMap((g) => (g.collapsed ? [] : [g.id])));
  if (skip)
    obstacleLists.set(
      scene.layout,
      (list = [...scene.layout.rects].flatMap(([id, r]) => (skip.has(id) ? [] : [r]))),
    );
  return list!;
}

function backRunY(scene: Scene, from: string, to: string, a: Rect, b: Rect): number {
  if (dragOffset(scene.tool, from) || dragOffset(scene.tool, to))
    return backEdgeRunY(a, b, obstacles(scene));
  let runs = backRuns.get(scene.layout);
  if (!runs) backRuns.set(scene.layout, (runs = new Map()));
  const key = `${from}>${to}`;
  let y = runs.get(key);
  if (y === undefined) runs.set(key, (y = backEdgeRunY(a, b, obstacles(scene))));
  return y;
}

export function drawScene(ctx: CanvasRenderingContext2D, scene: Scene): number {
  const { vp, size } = scene;
  const ratio = window.devicePixelRatio || 1;
  ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
  ctx.fillStyle = COLORS.background;
  ctx.fillRect(0, 0, size.width, size.height);
  ctx.setTransform(vp.scale * ratio, 0, 0, vp.scale * ratio, vp.dx * ratio, vp.dy * ratio);
  const seen = visibleWorld(scene);
  const detailed = vp.scale >= DETAIL_SCALE;
  if (scene.marks?.stages && scene.groups)
    drawBands(ctx, stageBands(scene.marks.stages, scene.groups.shapes, scene.layout.rects), vp);
  if (scene.groups) drawFrames(ctx, scene.groups, scene.layout, seen, vp, ratio);

  // edges, batched in one path
  ctx.beginPath();
  const heads: Rect[] = [];
  for (const e of scene.view.edges) {
    const a = rectOf(scene, e.from);
    const b = rectOf(scene, e.to);
    if (!a || !b) continue;
    const span = {
      x: Math.min(a.x, b.x),
      y: Math.min(a.y, b.y),
      w: Math.abs(b.x - a.x) + b.w + a.w,
      h: Math.abs(b.y - a.y) + b.h + a.h,
    };
    if (!intersects(span, seen)) continue;
    edgePath(
      ctx,
      a,
      b,
      detailed,
      isBackEdge(a, b) ? backRunY(scene, e.from, e.to, a, b) : undefined,
    );
    if (detailed) heads.push(b);
  }
  ctx.lineWidth = 1.5 / Math.max(vp.scale, 0.5);
  ctx.strokeStyle = COLORS.edge;
  ctx.stroke();
  if (heads.length) {
    ctx.beginPath();
    for (const b of heads) arrowHead(ctx, b);
    ctx.fillStyle = COLORS.edge;
    ctx.fill();
  }
  drawHighlight(
    ctx,
    scene.marks?.highlight ?? null,
    scene.selected,
    scene.layout.rects,
    vp,
    (a, b) =>
      edgePath(
        ctx,
        a,
        b,
        detailed,
        isBackEdge(a, b)
          ? backRunY(scene, scene.marks!.highlight!.from, scene.marks!.highlight!.to, a, b)
          : undefined,
      ),
  );
  if (scene.groups)
    drawBundled(ctx, scene.groups, scene.layout, vp, (e, a, b) =>
      edgePath(
        ctx,
        a,
        b,
        detailed,
        isBackEdge(a, b) ? backRunY(scene, e.from, e.to, a, b) : undefined,
      ),
    );
  const edgeLabels = scene.collectives.size ? drawCollectives(ctx, scene, seen, detailed) : [];

  let drawn = 0;
  if (detailed) {
    const placed: Placed[] = [];
    for (const box of scene.view.boxes) {
      const r = rectOf(scene, box.id);
      if (r && intersects(r, seen)) placed.push({ box, r });
    }
    drawDetailed(ctx, scene, placed);
    drawn = placed.length;
  } else {
    // far out: plain shapes, one path per style
    const groups = new Map<string, Rect[]>();
    for (const box of scene.view.boxes) {
      const r = rectOf(scene, box.id);
      if (!r || !intersects(r, seen)) continue;
      const key = scene.issues.has(box.id)
        ? "issue"
        : scene.selected.has(box.id)
          ? "selected"
          : box.kind;
      let list = groups.get(key);
      if (!list) groups.set(key, (list = []));
      list.push(r);
      drawn += 1;
    }
    const style: Record<string, [string, string]> = {
      tensor: [COLORS.tensorFill, COLORS.tensorStroke],
      operation: [COLORS.operationFill, COLORS.operationStroke],
      issue: [COLORS.issueFill, COLORS.issueStroke],
      selected: [COLORS.tensorFill, COLORS.selected],
    };
    ctx.lineWidth = 1.5 / vp.scale;
    for (const [key, rects] of groups) {
      ctx.beginPath();
      for (const r of rects) ctx.rect(r.x, r.y, r.w, r.h);
      ctx.fillStyle = style[key]![0];
      ctx.fill();
      ctx.strokeStyle = style[key]![1];
      ctx.stroke();
    }
    if (vp.scale >= TITLE_SCALE) drawTitles(ctx, scene, ratio, seen);
    if (scene.pins?.size)
      drawFarPins(
        ctx,
        scene.pins,
        (id) => [rectOf(scene, id)].find((r) => r && intersects(r, seen)),
        vp,
        ratio,
      );
  }

  if (scene.groups) drawCollapsed(ctx, scene.groups, scene.layout, seen, vp, ratio);
  drawEdgeLabels(ctx, edgeLabels);

  const tool = scene.tool;
  if (tool.kind === "connecting") {
    const a = rectOf(scene, tool.from);
    if (a) {
      ctx.beginPath();
      edgePath(ctx, a, { x: tool.at.x, y: tool.at.y - 0.5, w: 0, h: 1 }, true);
      ctx.lineWidth = 2.5;
      ctx.strokeStyle = COLORS.wire;
      ctx.setLineDash([7, 4]);
      ctx.stroke();
      ctx.setLineDash([]);
    }
  } else if (tool.kind === "selecting") {
    const x = Math.min(tool.from.x, tool.to.x);
    const y = Math.min(tool.from.y, tool.to.y);
    ctx.fillStyle = "rgba(11, 87, 208, 0.08)";
    ctx.fillRect(x, y, Math.abs(tool.to.x - tool.from.x), Math.abs(tool.to.y - tool.from.y));
    ctx.lineWidth = 1 / vp.scale;
    ctx.strokeStyle = COLORS.selected;
    ctx.strokeRect(x, y, Math.abs(tool.to.x - tool.from.x), Math.abs(tool.to.y - tool.from.y));
  }
  ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
  return drawn;
}

/** What is under a world point: the topmost box, and whether the pointer is on its handle. */
export function hitTest(
  view: GraphView,
  layout: Layout,
  p: Point,
  scale: number,
): { id: string; kind: Box["kind"]; zone: "body" | "handle" } | null {
  const slack = 9 / scale;
  for (let i = view.boxes.length - 1; i >= 0; i--) {
    const box = view.boxes[i]!;
    const r = layout.rects.get(box.id);
    if (!r) continue;
    if (box.kind === "tensor" && Math.hypot(p.x - (r.x + r.w), p.y - (r.y + r.h / 2)) <= slack)
      return { id: box.id, kind: box.kind, zone: "handle" };
    if (p.x >= r.x && p.x <= r.x + r.w && p.y >= r.y && p.y <= r.y + r.h)
      return { id: box.id, kind: box.kind, zone: "body" };
  }
  return null;
}
