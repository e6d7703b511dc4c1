// Positions for the boxes of a graph view: ELK's layered layout, left to right along the data
// flow (a long chain wrapped into rows, so it stays readable when fitted to the screen), except
// for nodes that carry a Layout tag, which stay where the tag puts them. In the
// browser ELK runs in a Web Worker (layout.worker.ts) so a large graph never blocks the page;
// ``runLayout`` is the computation, called by the worker and by the tests.

import type ELK from "elkjs/lib/elk-api.js";
import type { Box, GraphView } from "../model/document";
import { pathOrder, placePath, type Padding } from "./chainLayout";
import type { Grouped } from "./groups";
import type { Rect } from "./viewport";

export type { Rect } from "./viewport";

export interface Layout {
  rects: Map<string, Rect>;
}

const CHIP_H = 18;
export const TENSOR_H = 62;
export const OPERATION_H = 46;
export const GROUP_BOX_H = 54;

/** A chip's width for "W-1 3": a monospace estimate, so sizes agree in the worker and the page. */
export function chipWidth(ref: string, length: number | null): number {
  return 16 + 7 * (ref.length + 1 + String(length ?? "?").length);
}

export function boxSize(box: Pick<Box, "kind" | "title" | "chips" | "subtitle">): {
  w: number;
  h: number;
} {
  if (box.kind === "operation")
    return { w: Math.max(130, 32 + 8 * box.title.length), h: OPERATION_H };
  const chips = box.chips.reduce((s, c) => s + chipWidth(c.ref, c.length) + 4, 0);
  const text = 24 + 8 * Math.max(box.title.length + 1 + box.subtitle.length, 0);
  return {
    w: Math.max(140, Math.min(420, Math.max(chips + 20, text))),
    h: box.chips.length ? TENSOR_H : TENSOR_H - CHIP_H + 6,
  };
}

/** A collapsed group's box: its title ("self_attn · 14 ops") with room for the chevron. */
export function groupBoxSize(title: string): { w: number; h: number } {
  return { w: Math.max(170, 56 + 8 * title.length), h: GROUP_BOX_H };
}

export interface LayoutInput {
  /** What is drawn as a box (a collapsed group too), with the expanded group it is drawn in. */
  boxes: { id: string; w: number; h: number; pinned?: { x: number; y: number }; parent?: string }[];
  edges: { from: string; to: string }[];
  /** Expanded groups, each laid out as a block inside its parent (none: one flat layout). */
  groups?: { id: string; parent?: string }[];
  /** Lay out only this expanded group's block, at the origin (an incremental layout: render/incremental.ts). */
  block?: string;
}

export function layoutInput(view: GraphView, grouped?: Grouped): LayoutInput {
  const boxes: LayoutInput["boxes"] = view.boxes.map((b) => ({
    id: b.id,
    ...boxSize(b),
    pinned: b.pinned,
    parent: grouped?.parentOf.get(b.id),
  }));
  const groups: NonNullable<LayoutInput["groups"]> = [];
  for (const g of grouped?.groups ?? []) {
    const parent = g.parent ?? undefined;
    if (g.collapsed) boxes.push({ id: g.id, ...groupBoxSize(g.title), parent });
    else groups.push({ id: g.id, parent });
  }
  return {
    boxes,
    edges: view.edges.map((e) => ({ from: e.from, to: e.to })),
    ...(groups.length || grouped?.groups.length ? { groups } : {}),
  };
}

/**
 * A layered layout wider than this (graph px) and more than ``WRAP_ASPECT`` times as wide as tall
 * is wrapped: at 1280x800 it would be fitted below a scale of 0.67, where titles get hard to read.
 */
export const WRAP_WIDTH = 1000;
export const WRAP_ASPECT = 3;
/** The width : height that a wrapped layout aims at: a canvas beside the two side panels, with room to spare. */
export const WRAP_TARGET = 1.4;
/** The canvas a layout is judged on: the editor's at 1280x800, between its side panels. */
const REFERENCE = { w: 730, h: 700 };

/** The space between two boxes of one layer (ELK's ``elk.spacing.nodeNode``; quickLayout's too). */
export const NODE_GAP = 28;

const BASE_OPTIONS = {
  "elk.algorithm": "layered",
  "elk.direction": "RIGHT",
  "elk.spacing.nodeNode": String(NODE_GAP),
  "elk.layered.spacing.nodeNodeBetweenLayers": "60",
  "elk.padding": "[top=24,left=24,bottom=24,right=24]",
};

/**
 * ELK's wrapping cuts a long chain into rows that read left to right, top to bottom: the
 * ``MULTI_EDGE`` strategy, aiming at ``WRAP_TARGET``. Only a layout that would be much wider
 * than the screen is wrapped, so small graphs keep their one row.
 */
const WRAP_OPTIONS = {
  "elk.layered.wrapping.strategy": "MULTI_EDGE",
  "elk.aspectRatio": String(WRAP_TARGET),
};

interface Placed {
  children?: { id: string; x?: number; y?: number; width?: number; height?: number }[];
  width?: number;
  height?: number;
}

/** The scale at which a layout of ``w`` x ``h`` fits the reference canvas (at most 1). */
export function fitScale(w: number, h: number): number {
  return Math.min(1, REFERENCE.w / Math.max(1, w), REFERENCE.h / Math.max(1, h));
}

/** Whether a layered layout of this size should be wrapped into rows. */
export function tooWide(w: number, h: number): boolean {
  return w > WRAP_WIDTH && w > WRAP_ASPECT * Math.max(1, h);
}

/** One level's layered layout: rects relative to it, and its size (``padding`` included), wrapped into rows when too wide. */
export async function placeLevel(
  elk: InstanceType<typeof ELK>,
  items: { id: string; w: number; h: number }[],
  edges: { from: string; to: string }[],
  padding?: string,
): Promise<{ w: number; h: number; rects: [string, Rect][] }> {
  const ids = new Set(items.map((b) => b.id));
  const base = padding ? { ...BASE_OPTIONS, "elk.padding": padding } : BASE_OPTIONS;
  const path = pathOrder(items, edges);
  if (path) return wrappedPath(path, levelPadding(padding));
  const graph = (options: Record<string, string>) => ({
    id: "root",
    layoutOptions: options,
    children: items.map((b) => ({ id: b.id, width: b.w, height: b.h })),
    edges: edges
      .filter((e) => ids.has(e.from) && ids.has(e.to))
      .map((e, i) => ({ id: `e${i}`, sources: [e.from], targets: [e.to] })),
  });
  let placed: Placed = await elk.layout(graph(base));
  const [w, h] = [placed.width ?? 0, placed.height ?? 0];
  if (tooWide(w, h)) {
    const wrapped: Placed = await elk.layout(graph({ ...base, ...WRAP_OPTIONS }));
    // kept only when it is clearly easier to read once fitted
    if (fitScale(wrapped.width ?? 0, wrapped.height ?? 0) > 1.25 * fitScale(w, h)) placed = wrapped;
  }
  const rects: [string, Rect][] = (placed.children ?? []).map((c) => [
    c.id,
    { x: c.x ?? 0, y: c.y ?? 0, w: c.width ?? 0, h: c.height ?? 0 },
  ]);
  return { w: placed.width ?? 0, h: placed.height ?? 0, rects };
}

/** A level's padding: ``padding`` (ELK's "[top=..,left=..,..]"), else the root level's. */
export function levelPadding(padding?: string): Padding {
  const elkPadding = padding ?? BASE_OPTIONS["elk.padding"];
  const n = (side: string) => Number(new RegExp(`${side}=(\\d+)`).exec(elkPadding)?.[1] ?? 0);
  return { top: n("top"), left: n("left"), bottom: n("bottom"), right: n("right") };
}

/** A path in one row, or in the rows that fit the reference canvas best when that is clearly easier to read (as ELK's wrapping is kept). */
export function wrappedPath(
  path: Parameters<typeof placePath>[0],
  pad: Padding,
): ReturnType<typeof placePath> {
  const row = placePath(path, pad);
  if (!tooWide(row.w, row.h)) return row;
  let best = row;
  for (let rows = 2; rows <= path.length; rows++) {
    const wrapped = placePath(path, pad, (row.w - pad.left - pad.right) / rows);
    if (fitScale(wrapped.w, wrapped.h) > fitScale(best.w, best.h)) best = wrapped;
  }
  return fitScale(best.w, best.h) > 1.25 * fitScale(row.w, row.h) ? best : row;
}

export type Levels = (
  elk: InstanceType<typeof ELK>,
  input: LayoutInput,
) => Promise<{ rects: [string, Rect][] }>;

/** One flat level of every box no Layout tag places. */
const flat: Levels = (elk, input) =>
  placeLevel(
    elk,
    input.boxes.filter((b) => !b.pinned),
    input.edges,
  );

/**
 * Rects by node id (as a plain array, so it crosses postMessage). ``levels`` places the free
 * boxes (groupLayout.ts's ``groupLevels`` lays out each expanded group as a block).
 */
export async function runLayout(
  elk: InstanceType<typeof ELK>,
  input: LayoutInput,
  levels: Levels = flat,
): Promise<[string, Rect][]> {
  const out: [string, Rect][] = input.boxes
    .filter((b) => b.pinned)
    .map((b) => [b.id, { x: b.pinned!.x, y: b.pinned!.y, w: b.w, h: b.h }]);
  const placed = await levels(elk, input);
  // Free nodes go below what the user placed, so they never cover it.
  let floor = 0;
  for (const [, r] of out) floor = Math.max(floor, r.y + r.h + 40);
  for (const [id, r] of placed.rects) out.push([id, { ...r, y: r.y + floor }]);
  return out;
}

/** Where nodes go when no layout worker can start: a grid below everything placed. */
export function gridLayout(input: LayoutInput): [string, Rect][] {
  const placed = input.boxes.filter((b) => b.pinned);
  let floor = 0;
  for (const b of placed) floor = Math.max(floor, b.pinned!.y + b.h + 40);
  const out: [string, Rect][] = placed.map((b) => [
    b.id,
    { x: b.pinned!.x, y: b.pinned!.y, w: b.w, h: b.h },
  ]);
  input.boxes
    .filter((b) => !b.pinned)
    .forEach((b, i) =>
      out.push([
        b.id,
        { x: 24 + (i % 6) * 240, y: floor + 24 + Math.floor(i / 6) * 100, w: b.w, h: b.h },
      ]),
    );
  return out;
}

/**
 * What of ``previous`` a new view keeps at once: placed nodes where their Layout tag puts them,
 * nodes laid out before where they were (sized anew). ``complete`` is false when some box has
 * neither: then the layout engine places the rest.
 */
export function keptLayout(
  view: GraphView,
  previous: Layout,
  grouped?: Grouped,
): { layout: Layout; complete: boolean } {
  const rects = new Map<string, Rect>();
  let complete = true;
  for (const b of view.boxes) {
    const size = boxSize(b);
    const old = previous.rects.get(b.id);
    if (b.pinned) rects.set(b.id, { ...b.pinned, ...size });
    else if (old) rects.set(b.id, { x: old.x, y: old.y, ...size });
    else complete = false;
  }
  for (const g of grouped?.groups ?? []) {
    if (!g.collapsed) continue;
    const old = previous.rects.get(g.id);
    if (old) rects.set(g.id, { x: old.x, y: old.y, ...groupBoxSize(g.title) });
    else complete = false;
  }
  return { layout: { rects }, complete };
}
