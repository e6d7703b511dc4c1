// Groups by name scope (issue 20): an imported operation keeps its ONNX name scope as a Group tag
// (``{"scope": "/layers.0/self_attn"}``), and scopes nest by their path. This module is the pure
// model of it: which group each node belongs to, and what is drawn once some groups are
// collapsed (the visible boxes, the collapsed groups as boxes, the edges that cross them).
//
// Membership rule:
// - an operation belongs to the group of its tag's scope;
// - an operation without a tag (one the importer inserted: cast_axes, slice) belongs to the
//   innermost group holding every grouped operation next to it (the producers of its inputs and
//   the consumers of its outputs), or to none;
// - a tensor belongs to the innermost group holding every operation that touches it (its producer
//   and its consumers). So a weight or an input read only inside one group is in it, a tensor that
//   one group writes and another reads stays outside both (a boundary tensor, drawn between
//   them when they are collapsed), and a tensor nothing reads (a graph output) is at the top.
// Collapsed state is view state: a set of scope paths, never part of the document.

import {
  OPERATION,
  TENSOR,
  eachTensor,
  type Box,
  type Edge,
  type GraphView,
  type LoomDocument,
} from "../model/document";

export const GROUP = "urn:geon:2026-11:tag_types.jsd#/tags/Group";

/** Graphs with more operations than this, and groups, open collapsed. */
export const COLLAPSE_OVER = 60;

/** More operations than {@link COLLAPSE_OVER}: such a graph, just opened, is drawn before its panels. */
export const isLarge = (doc: LoomDocument): boolean =>
  doc.nodes.reduce((n, node) => n + (node.type === OPERATION ? 1 : 0), 0) > COLLAPSE_OVER;

export interface Group {
  /** The scope path, "/layers.0/self_attn". */
  path: string;
  /** Its last segment, "self_attn". */
  name: string;
  parent: string | null;
  /** 1 for a top-level scope. */
  depth: number;
  /** Sub-groups, in document order. */
  children: string[];
  /** The nodes directly in it (tensors and operations). */
  members: string[];
  /** Operations in it and in its sub-groups. */
  ops: number;
}

export interface ScopeTree {
  groups: Map<string, Group>;
  /** Top-level scopes, in document order. */
  roots: string[];
  /** The group of each node in one (nodes at the top level are absent). */
  of: Map<string, string>;
}

/** The id a group has where node ids are expected (layout rects, edges). */
export const groupId = (path: string): string => `group:${path}`;
export const isGroupId = (id: string): boolean => id.startsWith("group:");
export const groupPath = (id: string): string => id.slice("group:".length);

/** "/layers.0/self_attn" from a tag's scope, however slashed; null for none. */
export function scopePath(scope: unknown): string | null {
  if (typeof scope !== "string") return null;
  const parts = scope.split("/").filter(Boolean);
  return parts.length ? `/${parts.join("/")}` : null;
}

/** The innermost scope holding both (null: only the top level does). */
export function commonScope(a: string | null, b: string | null): string | null {
  if (a === null || b === null) return null;
  if (a === b) return a;
  const x = a.split("/");
  const y = b.split("/");
  let n = 0;
  while (n < x.length && n < y.length && x[n] === y[n]) n++;
  return n > 1 ? x.slice(0, n).join("/") : null;
}

/** Whether ``path`` is ``scope`` or inside it. */
export function within(path: string | undefined, scope: string): boolean {
  return path !== undefined && (path === scope || path.startsWith(`${scope}/`));
}

/** Every group of ``doc`` and the group of each node, by the rule above. */
export function scopeTree(doc: LoomDocument): ScopeTree {
  const producer = new Map<string, string>();
  const consumers = new Map<string, string[]>();
  const reads = new Map<string, string[]>();
  const writes = new Map<string, string[]>();
  const scope = new Map<string, string | null>();
  const ops: string[] = [];
  for (const node of doc.nodes) {
    if (node.type !== OPERATION) continue;
    ops.push(node.id);
    const ins: string[] = [];
    const outs: string[] = [];
    eachTensor(node.body.inputs, (_, t) => {
      ins.push(t);
      const list = consumers.get(t);
      if (list) list.push(node.id);
      else consumers.set(t, [node.id]);
    });
    eachTensor(node.body.outputs, (_, t) => {
      outs.push(t);
      if (!producer.has(t)) producer.set(t, node.id);
    });
    reads.set(node.id, ins);
    writes.set(node.id, outs);
    const path = scopePath((node.tags?.[GROUP] as { scope?: unknown } | undefined)?.scope);
    if (path) scope.set(node.id, path);
  }
  // untagged operations take the scope their grouped neighbours share, a few passes deep
  let pending = ops.filter((id) => !scope.has(id));
  for (let pass = 0; pass < 8 && pending.length; pass++) {
    const left: string[] = [];
    for (const id of pending) {
      const near = [
        ...(reads.get(id) ?? []).flatMap((t) => (producer.has(t) ? [producer.get(t)!] : [])),
        ...(writes.get(id) ?? []).flatMap((t) => consumers.get(t) ?? []),
      ].filter((n) => scope.has(n));
      if (near.length) scope.set(id, near.map((n) => scope.get(n) ?? null).reduce(commonScope));
      else left.push(id);
    }
    if (left.length === pending.length) break;
    pending = left;
  }
  const tree: ScopeTree = { groups: new Map(), roots: [], of: new Map() };
  const ensure = (path: string): Group => {
    let g = tree.groups.get(path);
    if (g) return g;
    const cut = path.lastIndexOf("/");
    const parent = cut > 0 ? path.slice(0, cut) : null;
    g = {
      path,
      name: path.slice(cut + 1),
      parent,
      depth: path.split("/").length - 1,
      children: [],
      members: [],
      ops: 0,
    };
    if (parent) ensure(parent).children.push(path);
    else tree.roots.push(path);
    tree.groups.set(path, g);
    return g;
  };
  for (const node of doc.nodes) {
    let path: string | null = null;
    if (node.type === OPERATION) {
      path = scope.get(node.id) ?? null;
      for (let p = path; p; p = ensure(p).parent) ensure(p).ops += 1;
    } else if (node.type === TENSOR) {
      const readers = consumers.get(node.id);
      if (readers) {
        const from = producer.get(node.id);
        path = scope.get(from ?? readers[0]!) ?? null;
        for (const id of readers) path = commonScope(path, scope.get(id) ?? null);
      }
    }
    if (path) {
      ensure(path).members.push(node.id);
      tree.of.set(node.id, path);
    }
  }
  return tree;
}

/** How a large graph opens: every group collapsed, below the first level with more than one group. */
export function defaultCollapsed(tree: ScopeTree, operations: number): Set<string> {
  if (operations <= COLLAPSE_OVER || !tree.groups.size) return new Set();
  let level = tree.roots;
  const open = new Set<string>();
  while (level.length === 1 && tree.groups.get(level[0]!)!.children.length) {
    open.add(level[0]!);
    level = tree.groups.get(level[0]!)!.children;
  }
  return new Set([...tree.groups.keys()].filter((p) => !open.has(p)));
}

/** The collapsed set with every group around ``nodeId`` expanded (a search hit, a jump). */
export function revealing(
  tree: ScopeTree,
  nodeId: string,
  collapsed: ReadonlySet<string>,
): Set<string> {
  const path =
    tree.of.get(nodeId) ??
    (isGroupId(nodeId) ? tree.groups.get(groupPath(nodeId))?.parent : undefined);
  return new Set([...collapsed].filter((p) => !within(path ?? undefined, p)));
}

/** The tensors outside a group that its operations read (inputs) and write (outputs). */
export function boundary(
  tree: ScopeTree,
  view: GraphView,
  path: string,
): { inputs: string[]; outputs: string[] } {
  const inside = (id: string) => within(tree.of.get(id), path);
  const inputs = new Set<string>();
  const outputs = new Set<string>();
  for (const e of view.edges) {
    if (inside(e.to) && !inside(e.from)) inputs.add(e.from);
    if (inside(e.from) && !inside(e.to)) outputs.add(e.to);
  }
  return { inputs: [...inputs], outputs: [...outputs] };
}

/** A group as drawn: a frame around its members, or (collapsed) one box. */
export interface GroupShape {
  id: string;
  path: string;
  name: string;
  depth: number;
  ops: number;
  collapsed: boolean;
  /** The expanded group it is drawn in (its id), if any. */
  parent: string | null;
  /** What a collapsed box says: "self_attn · 14 ops". */
  title: string;
}

/** An edge of the grouped view; ``count`` > 1 when it bundles edges into or out of a collapsed group. */
export interface GroupedEdge extends Edge {
  count: number;
}

export interface Grouped {
  /** What is drawn of the view: the boxes outside collapsed groups, the edges between what is drawn. */
  view: { boxes: Box[]; edges: GroupedEdge[] };
  /** Every group drawn, outer ones first. */
  groups: GroupShape[];
  /** The expanded group (its id) each drawn box is in. */
  parentOf: Map<string, string>;
  /** The collapsed group (its id) each hidden node is in. */
  hiddenIn: Map<string, string>;
}

export function groupTitle(name: string, ops: number): string {
  return `${name} · ${ops} op${ops === 1 ? "" : "s"}`;
}

/** ``view`` with the groups in ``collapsed`` drawn as single boxes. */
export function groupedView(
  view: GraphView,
  tree: ScopeTree,
  collapsed: ReadonlySet<string>,
): Grouped {
  // the outermost collapsed group around a path (null: the path is drawn)
  const hider = new Map<string, string | null>();
  const hiddenBy = (path: string | undefined): string | null => {
    if (!path) return null;
    let h = hider.get(path);
    if (h === undefined) {
      const parent = tree.groups.get(path)?.parent ?? null;
      h = hiddenBy(parent ?? undefined) ?? (collapsed.has(path) ? path : null);
      hider.set(path, h);
    }
    return h;
  };
  const groups: GroupShape[] = [];
  const walk = (path: string): void => {
    const g = tree.groups.get(path)!;
    const shown = !g.parent || hiddenBy(g.parent) === null;
    if (!shown) return;
    const isCollapsed = collapsed.has(path);
    groups.push({
      id: groupId(path),
      path,
      name: g.name,
      depth: g.depth,
      ops: g.ops,
      collapsed: isCollapsed,
      parent: g.parent ? groupId(g.parent) : null,
      title: groupTitle(g.name, g.ops),
    });
    if (!isCollapsed) g.children.forEach(walk);
  };
  tree.roots.forEach(walk);
  const boxes: Box[] = [];
  const parentOf = new Map<string, string>();
  const hiddenIn = new Map<string, string>();
  const shownAs = new Map<string, string>();
  // one id string per group, not one per box
  const ids = new Map<string, string>();
  const idOf = (path: string): string => {
    let id = ids.get(path);
    if (id === undefined) ids.set(path, (id = groupId(path)));
    return id;
  };
  for (const b of view.boxes) {
    const path = tree.of.get(b.id);
    const h = hiddenBy(path);
    if (h !== null) {
      hiddenIn.set(b.id, idOf(h));
      shownAs.set(b.id, idOf(h));
      continue;
    }
    boxes.push(b);
    shownAs.set(b.id, b.id);
    if (path) parentOf.set(b.id, idOf(path));
  }
  for (const g of groups) if (g.parent) parentOf.set(g.id, g.parent);
  const edges: GroupedEdge[] = [];
  const byKey = new Map<string, GroupedEdge>();
  for (const e of view.edges) {
    const from = shownAs.get(e.from);
    const to = shownAs.get(e.to);
    if (!from || !to || from === to) continue;
    // an edge between two drawn boxes is the view's own, listed once: only a collapsed group's can bundle
    if (from === e.from && to === e.to) {
      edges.push({ from, to, port: e.port, count: 1 });
      continue;
    }
    const key = `${from}->${to}`;
    const seen = byKey.get(key);
    if (seen) seen.count += 1;
    else {
      const edge = { from, to, port: e.port, count: 1 };
      byKey.set(key, edge);
      edges.push(edge);
    }
  }
  return { view: { boxes, edges }, groups, parentOf, hiddenIn };
}
