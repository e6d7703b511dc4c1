// The layout of a grouped view (render/groups.ts): each expanded group is a block, laid out on its
// own (its members and its sub-groups' blocks, innermost first) and placed as one node of its
// parent's level; a collapsed group is a plain box. An edge between levels counts, at each
// level, as an edge between the blocks it joins there, so blocks follow the data flow. Runs in
// the layout worker like the flat layout. The frames drawn around expanded groups are the
// bounds of what they hold (``withFrames``), so they follow a node the user drags.

import type ELK from "elkjs/lib/elk-api.js";
import type { Grouped } from "./groups";
import { placeLevel, type LayoutInput, type Levels } from "./layout";
import { bounds, type Rect } from "./viewport";

/** A frame's margin around what it holds, and its header (the chevron and the scope's name). */
export const FRAME_PAD = 14;
export const FRAME_TOP = 34;
const PADDING = `[top=${FRAME_TOP},left=${FRAME_PAD},bottom=${FRAME_PAD},right=${FRAME_PAD}]`;

type Level = string | undefined;

/** Levels laid out lately, by what they hold: toggling one group lays out only the levels it changes. */
const levelCache = new Map<string, Awaited<ReturnType<typeof placeLevel>>>();
const CACHED_LEVELS = 400;

async function cachedLevel(elk: InstanceType<typeof ELK>, items: { id: string; w: number; h: number }[], edges: { from: string; to: string }[], padding?: string): ReturnType<typeof placeLevel> {
  const key = JSON.stringify([padding ?? "", items, edges]);
  const seen = levelCache.get(key);
  if (seen) return seen;
  const done = await placeLevel(elk, items, edges, padding);
  if (levelCache.size >= CACHED_LEVELS) levelCache.delete(levelCache.keys().next().value!);
  levelCache.set(key, done);
  return done;
}

/** Places every box no Layout tag places, group by group (``runLayout``'s ``levels``). */
export const groupLevels: Levels = async (elk: InstanceType<typeof ELK>, input: LayoutInput) => {
  const parent = new Map<string, Level>();
  const size = new Map<string, { w: number; h: number }>();
  const kids = new Map<Level, string[]>();
  const add = (id: string, level: Level): void => {
    parent.set(id, level);
    const list = kids.get(level);
    if (list) list.push(id);
    else kids.set(level, [id]);
  };
  const expanded = new Set<string>();
  for (const g of input.groups ?? []) {
    expanded.add(g.id);
    add(g.id, g.parent);
  }
  for (const b of input.boxes) {
    if (b.pinned) continue;
    size.set(b.id, { w: b.w, h: b.h });
    add(b.id, b.parent !== undefined && expanded.has(b.parent) ? b.parent : undefined);
  }
  /** The item of ``level`` that holds ``id`` (itself, or the block of a group around it). */
  const lift = (id: string, level: Level): string | null => {
    for (let at: string | undefined = id; at !== undefined && parent.has(at); at = parent.get(at)) if (parent.get(at) === level) return at;
    return null;
  };
  const relative = new Map<Level, [string, Rect][]>();
  const place = async (level: Level): Promise<{ w: number; h: number }> => {
    const items: { id: string; w: number; h: number }[] = [];
    for (const id of kids.get(level) ?? []) items.push({ id, ...(expanded.has(id) ? await place(id) : size.get(id)!) });
    const edges: { from: string; to: string }[] = [];
    const seen = new Set<string>();
    for (const e of input.edges) {
      const from = lift(e.from, level);
      const to = lift(e.to, level);
      if (!from || !to || from === to || seen.has(`${from}>${to}`)) continue;
      seen.add(`${from}>${to}`);
      edges.push({ from, to });
    }
    const done = await cachedLevel(elk, items, edges, level === undefined ? undefined : PADDING);
    relative.set(level, done.rects);
    return { w: done.w, h: done.h };
  };
  await place(undefined);
  const rects: [string, Rect][] = [];
  const put = (level: Level, ox: number, oy: number): void => {
    for (const [id, r] of relative.get(level) ?? []) {
      const at = { x: r.x + ox, y: r.y + oy, w: r.w, h: r.h };
      rects.push([id, at]);
      if (expanded.has(id)) put(id, at.x, at.y);
    }
  };
  put(undefined, 0, 0);
  return { rects };
};

/** ``rects`` with each expanded group's frame around what it holds (innermost first); a group holding nothing drawn has none. */
export function withFrames(rects: Map<string, Rect>, grouped: Grouped): Map<string, Rect> {
  const held = new Map<string, string[]>();
  for (const [id, group] of grouped.parentOf) {
    const list = held.get(group);
    if (list) list.push(id);
    else held.set(group, [id]);
  }
  for (let i = grouped.groups.length - 1; i >= 0; i--) {
    const g = grouped.groups[i]!;
    if (g.collapsed) continue;
    const inside = (held.get(g.id) ?? []).flatMap((id) => (rects.has(id) ? [rects.get(id)!] : []));
    if (!inside.length) {
      rects.delete(g.id);
      continue;
    }
    const b = bounds(inside);
    rects.set(g.id, { x: b.x - FRAME_PAD, y: b.y - FRAME_TOP, w: b.w + 2 * FRAME_PAD, h: b.h + FRAME_TOP + FRAME_PAD });
  }
  return rects;
}
