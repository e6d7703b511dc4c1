// Opening or closing one group without laying the graph out again (issue 34: "layout incremental,
// positions stable when a group opens or closes"). The group keeps its top-left corner; what lies
// to the right of it moves right by as much as it grew, what lies below it (overlapping its
// columns) moves down by as much, and everything else stays exactly where it was. Only the
// opened group's block is laid out (by the layout worker, render/groupLayout.ts's ``block``); a
// group that closes needs no layout at all. Opening then closing a group puts every box back
// where it was: the rule classifies each box the same way both times.

import { withFrames } from "./groupLayout";
import { groupBoxSize, type LayoutInput } from "./layout";
import { groupId, groupPath, within, type Grouped, type GroupShape } from "./groups";
import type { Rect } from "./viewport";

/** The one drawn group that opened or closed between two collapsed sets (groups inside it may have changed with it); null for any other change. */
export function changedGroup(
  before: Grouped,
  was: ReadonlySet<string>,
  now: ReadonlySet<string>,
): { group: GroupShape; opened: boolean } | null {
  const changed = [...was].filter((p) => !now.has(p)).concat([...now].filter((p) => !was.has(p)));
  const drawn = before.groups.filter((g) => changed.includes(g.path));
  const outer = drawn.filter((g) => !drawn.some((o) => o !== g && within(g.path, o.path)));
  if (outer.length !== 1) return null;
  const group = outer[0]!;
  if (!changed.every((p) => within(p, group.path))) return null;
  return { group, opened: group.collapsed && !now.has(group.path) };
}

/**
 * ``rects`` with room made for ``from`` (the group's rect before) growing or shrinking to ``to``
 * at the same top-left: boxes right of it move by the change of width, boxes below it within its
 * columns by the change of height. ``keep`` says which rects carry over (the others are dropped).
 */
export function makeRoom(
  rects: ReadonlyMap<string, Rect>,
  from: Rect,
  to: { w: number; h: number },
  keep: (id: string) => boolean,
): Map<string, Rect> {
  const dw = to.w - from.w;
  const dh = to.h - from.h;
  const out = new Map<string, Rect>();
  for (const [id, r] of rects) {
    if (!keep(id)) continue;
    if (r.x >= from.x + from.w) out.set(id, { ...r, x: r.x + dw });
    else if (r.y >= from.y + from.h && r.x + r.w > from.x) out.set(id, { ...r, y: r.y + dh });
    else out.set(id, r);
  }
  return out;
}

/** Whether ``id`` (a node or a group's id) is drawn inside the group ``path`` in ``grouped``. */
function inside(grouped: Grouped, id: string, path: string): boolean {
  for (let at: string | undefined = id; at !== undefined; at = grouped.parentOf.get(at)) {
    if (at.startsWith("group:") && within(groupPath(at), path) && at !== id) return true;
  }
  return false;
}

/** The layout after ``path`` closed: its frame ``frame`` becomes its box at the same corner, the rest makes room. */
export function closedLayout(
  rects: ReadonlyMap<string, Rect>,
  before: Grouped,
  group: GroupShape,
  frame: Rect,
): Map<string, Rect> {
  const box = groupBoxSize(group.title);
  const out = makeRoom(
    rects,
    frame,
    box,
    (id) => id !== group.id && !inside(before, id, group.path),
  );
  out.set(group.id, { x: frame.x, y: frame.y, ...box });
  return out;
}

/**
 * The layout after ``group`` opened: ``block`` is its contents laid out at the origin and
 * ``frame`` the frame drawn around them there (render/groupLayout.ts's ``withFrames``); the frame
 * goes where the group's box ``box`` was, the rest makes room.
 */
export function openedLayout(
  rects: ReadonlyMap<string, Rect>,
  group: GroupShape,
  box: Rect,
  block: ReadonlyMap<string, Rect>,
  frame: Rect,
): Map<string, Rect> {
  const out = makeRoom(rects, box, frame, (id) => id !== group.id && !block.has(id));
  const dx = box.x - frame.x;
  const dy = box.y - frame.y;
  for (const [id, r] of block) if (id !== group.id) out.set(id, { ...r, x: r.x + dx, y: r.y + dy });
  return out;
}

/** What the worker needs to lay out the block of the expanded group ``path`` alone. */
export function blockInput(input: LayoutInput, path: string): LayoutInput {
  const holds = (parent: string | undefined) =>
    parent !== undefined && within(groupPath(parent), path);
  const groups = (input.groups ?? []).filter((g) => within(groupPath(g.id), path));
  const boxes = input.boxes.filter((b) => holds(b.parent));
  const ids = new Set(boxes.map((b) => b.id));
  return {
    boxes,
    groups,
    edges: input.edges.filter((e) => ids.has(e.from) && ids.has(e.to)),
    block: groupId(path),
  };
}

/** An opened group's block as laid out (``rects``: the worker's answer for ``blockInput``, at the origin) and the frame drawn around it. */
export interface Block {
  block: Map<string, Rect>;
  frame: Rect;
}

/** The block of ``groupId`` in ``rects``, moved so the group's corner is the origin; null when the group is not in it. */
export function placedBlock(
  rects: ReadonlyMap<string, Rect>,
  groupId: string,
  grouped: Grouped,
): Block | null {
  const origin = rects.get(groupId);
  if (!origin) return null;
  const block = new Map(
    [...rects].map(([id, r]) => [id, { ...r, x: r.x - origin.x, y: r.y - origin.y }]),
  );
  const frame = withFrames(new Map(block), grouped).get(groupId) ?? {
    x: 0,
    y: 0,
    w: origin.w,
    h: origin.h,
  };
  return { block, frame };
}

/**
 * Blocks laid out lately, by their shape (``blockInput``'s boxes' sizes, what holds them and its
 * edges, by position, never by id): the 96 layers of an imported stack are one or two shapes,
 * so once one layer is laid out, opening any other takes its places at once, with no layout.
 */
export class BlockCache {
  private readonly blocks = new Map<string, { rects: (Rect | undefined)[]; frame: Rect }>();

  constructor(private readonly size = 64) {}

  /** The ids of ``input`` in the order its shape lists them, and the shape. */
  private static shape(input: LayoutInput): { ids: string[]; key: string } {
    const groups = input.groups ?? [];
    const ids = [...groups.map((g) => g.id), ...input.boxes.map((b) => b.id)];
    const at = new Map(ids.map((id, i) => [id, i]));
    const where = (id: string | undefined) => (id === undefined ? -1 : (at.get(id) ?? -1));
    const key = JSON.stringify([
      where(input.block),
      groups.map((g) => where(g.parent)),
      input.boxes.map((b) => [b.w, b.h, where(b.parent)]),
      input.edges.map((e) => [where(e.from), where(e.to)]),
    ]);
    return { ids, key };
  }

  get(input: LayoutInput): Block | null {
    const { ids, key } = BlockCache.shape(input);
    const seen = this.blocks.get(key);
    if (!seen) return null;
    const block = new Map<string, Rect>();
    ids.forEach((id, i) => {
      const r = seen.rects[i];
      if (r) block.set(id, r);
    });
    return { block, frame: seen.frame };
  }

  set(input: LayoutInput, { block, frame }: Block): void {
    const { ids, key } = BlockCache.shape(input);
    if (this.blocks.size >= this.size) this.blocks.delete(this.blocks.keys().next().value!);
    this.blocks.set(key, { rects: ids.map((id) => block.get(id)), frame });
  }
}
