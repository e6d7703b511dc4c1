// The layout of a grouped view (render/groups.ts): each expanded group is a block, laid out on its
// own (its members and its sub-groups' blocks, innermost first) and placed as one node of its
// parent's level; a collapsed group is a plain box. An edge between levels counts, at each
// level, as an edge between the blocks it joins there, so blocks follow the data flow. Runs in
// the layout worker like the flat layout. The frames drawn around expanded groups are the
// bounds of what they hold (``withFrames``), so they follow a node the user drags.

import type ELK from "elkjs/lib/elk-api.js";
import type { Grouped } from "./groups";
import { placeLevel, type LayoutInput, type Levels } from "./layout";
import { quickLevel } from "./quickLayout";
import { bounds, type Rect } from "./viewport";

/** A frame's margin around what it holds, and its header (the chevron and the scope's name). */
export const FRAME_PAD = 14;
export const FRAME_TOP = 34;
const PADDING = `[top=${FRAME_TOP},left=${FRAME_PAD},bottom=${FRAME_PAD},right=${FRAME_PAD}]`;

type Level = string | undefined;

/**
 * Levels laid out lately, by their shape: the sizes of what they hold in order and their edges by
 * position, never their ids. The 96 layers of an imported stack are one shape, so ELK lays out
 * one of them and the others take its places (ELK places the same input the same way); toggling
 * one group lays out only the levels it changes.
 */
const levelCache = new Map<string, { w: number; h: number; rects: Rect[] }>();
const CACHED_LEVELS = 400;
/** How many levels ELK (or the path placement) laid out, and how many came from the cache: for tests and benchmarks. */
export const levelStats = { placed: 0, reused: 0 };

async function cachedLevel(
  elk: InstanceType<typeof ELK>,
  items: { id: string; w: number; h: number }[],
  edges: { from: string; to: string }[],
  padding?: string,
  pause?: () => Promise<void>,
): ReturnType<typeof placeLevel> {
  const index = new Map(items.map((b, i) => [b.id, i]));
  const key = JSON.stringify([
    padding ?? "",
    items.map((b) => [b.w, b.h]),
    edges.map((e) => [index.get(e.from), index.get(e.to)]),
  ]);
  const seen = levelCache.get(key);
  if (seen) {
    levelStats.reused += 1;
    return { w: seen.w, h: seen.h, rects: items.map((b, i) => [b.id, seen.rects[i]!]) };
  }
  await pause?.();
  const again = levelCache.get(key);
  if (again) return { w: again.w, h: again.h, rects: items.map((b, i) => [b.id, again.rects[i]!]) };
  const done = await placeLevel(elk, items, edges, padding);
  levelStats.placed += 1;
  const at = new Map(done.rects);
  if (levelCache.size >= CACHED_LEVELS) levelCache.delete(levelCache.keys().next().value!);
  // a level ELK left some item out of is not kept (it could not be mapped back by position)
  if (items.every((b) => at.has(b.id)))
    levelCache.set(key, { w: done.w, h: done.h, rects: items.map((b) => at.get(b.id)!) });
  return done;
}

/**
 * Places every box no Layout tag places, group by group (``runLayout``'s ``levels``); ``pause``
 * runs before each level ELK lays out (the worker's layouts ahead wait there for the real ones).
 */
export const groupLevels = (
  elk: InstanceType<typeof ELK>,
  input: LayoutInput,
  pause?: () => Promise<void>,
): ReturnType<Levels> =>
  byLevel(input, (items, edges, padding) => cachedLevel(elk, items, edges, padding, pause));

/** The same places, each level placed without ELK at once (render/quickLayout.ts): shown until ELK's arrive. */
export const quickLevels = (input: LayoutInput): ReturnType<Levels> => byLevel(input, quickLevel);

type PlaceLevel = (
  items: { id: string; w: number; h: number }[],
  edges: { from: string; to: string }[],
  padding?: string,
) => ReturnType<typeof quickLevel> | ReturnType<typeof placeLevel>;

async function byLevel(input: LayoutInput, placeOne: PlaceLevel): ReturnType<Levels> {
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
  // each edge counts at one level: the innermost one holding both its ends, as an edge between
  // the items there that hold them (found once per edge, not once per level)
  const up = (id: string): string[] => {
    const out: string[] = [];
    for (let at: string | undefined = id; at !== undefined && parent.has(at); at = parent.get(at))
      out.push(at);
    return out.reverse();
  };
  const edgesAt = new Map<Level, { from: string; to: string }[]>();
  const seen = new Set<string>();
  for (const e of input.edges) {
    const a = up(e.from);
    const b = up(e.to);
    let i = 0;
    while (i < a.length && i < b.length && a[i] === b[i]) i++;
    if (i >= a.length || i >= b.length) continue;
    const level = i === 0 ? undefined : a[i - 1];
    const key = `${a[i]}>${b[i]}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const list = edgesAt.get(level);
    if (list) list.push({ from: a[i]!, to: b[i]! });
    else edgesAt.set(level, [{ from: a[i]!, to: b[i]! }]);
  }
  const relative = new Map<Level, [string, Rect][]>();
  const place = async (level: Level): Promise<{ w: number; h: number }> => {
    const items: { id: string; w: number; h: number }[] = [];
    for (const id of kids.get(level) ?? [])
      items.push({ id, ...(expanded.has(id) ? await place(id) : size.get(id)!) });
    const done = await placeOne(
      items,
      edgesAt.get(level) ?? [],
      level === undefined ? undefined : PADDING,
    );
    relative.set(level, done.rects);
    return { w: done.w, h: done.h };
  };
  const rects: [string, Rect][] = [];
  const put = (level: Level, ox: number, oy: number): void => {
    for (const [id, r] of relative.get(level) ?? []) {
      const at = { x: r.x + ox, y: r.y + oy, w: r.w, h: r.h };
      rects.push([id, at]);
      if (expanded.has(id)) put(id, at.x, at.y);
    }
  };
  if (input.block !== undefined && expanded.has(input.block)) {
    // one group's block alone, at the origin (render/incremental.ts puts it where the group was)
    const { w, h } = await place(input.block);
    rects.push([input.block, { x: 0, y: 0, w, h }]);
    put(input.block, 0, 0);
    return { rects };
  }
  await place(undefined);
  put(undefined, 0, 0);
  return { rects };
}

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
    rects.set(g.id, {
      x: b.x - FRAME_PAD,
      y: b.y - FRAME_TOP,
      w: b.w + 2 * FRAME_PAD,
      h: b.h + FRAME_TOP + FRAME_PAD,
    });
  }
  return rects;
}
