// The LoomGraph document as the editor sees it (DESIGN.md §3), and the view derived from it:
// which boxes to draw (tensors and operations) and which edges join them.

const LOOM = "http://tensortapestry.org/schemas/loom/2024-01/";
const GEON = "urn:geon:2026-11:";
export const TENSOR = `${LOOM}node_types.jsd#/nodes/Tensor`;
export const OPERATION = `${LOOM}node_types.jsd#/nodes/Operation`;
export const APPLICATION = `${LOOM}node_types.jsd#/nodes/Application`;
export const TENSOR_AXES = `${GEON}tag_types.jsd#/tags/TensorAxes`;
export const LAYOUT = `${GEON}tag_types.jsd#/tags/Layout`;

export interface LoomNode {
  id: string;
  type: string;
  label?: string;
  body: Record<string, unknown>;
  tags?: Record<string, unknown>;
}

export interface LoomDocument {
  id: string;
  nodes: LoomNode[];
}

export interface Issue {
  constraint: string;
  type: string;
  severity: "error" | "warning" | "info";
  summary: string;
  message: string;
  nodeIds: string[];
}

export interface Point {
  x: number;
  y: number;
}

export type BoxKind = "tensor" | "operation";

export interface Box {
  id: string;
  kind: BoxKind;
  title: string;
  subtitle: string;
  /** The position from the node's Layout tag, when it has one. */
  pinned?: Point;
}

export interface Edge {
  from: string;
  to: string;
}

export interface GraphView {
  boxes: Box[];
  edges: Edge[];
}

interface Selection {
  tensorId: string;
}

interface Range {
  start: number[];
  end: number[];
}

function selections(io: unknown): Selection[] {
  if (io === null || typeof io !== "object") return [];
  return Object.values(io as Record<string, unknown>).flatMap((list) =>
    Array.isArray(list) ? (list as Selection[]).filter((s) => typeof s?.tensorId === "string") : [],
  );
}

function pinned(node: LoomNode): Point | undefined {
  const tag = node.tags?.[LAYOUT] as Partial<Point> | undefined;
  if (tag && typeof tag.x === "number" && typeof tag.y === "number") return { x: tag.x, y: tag.y };
  return undefined;
}

function tensorSubtitle(node: LoomNode): string {
  const range = node.body.range as Range | undefined;
  const dtype = String(node.body.dtype ?? "?");
  if (!range) return dtype;
  const shape = range.start.map((s, i) => (range.end[i] ?? s) - s);
  const axes = (node.tags?.[TENSOR_AXES] as { axes?: string[] } | undefined)?.axes;
  const dims = axes && axes.length === shape.length
    ? axes.map((a, i) => `${a}=${shape[i]}`).join(", ")
    : shape.join("×");
  const origin = range.start.some((s) => s !== 0) ? ` @[${range.start.join(", ")}]` : "";
  return `${dtype} (${dims})${origin}`;
}

/** The boxes and edges to draw for a document: tensors, operations and the data flow. */
export function graphView(doc: LoomDocument): GraphView {
  const shards = new Map<string, number>();
  for (const node of doc.nodes) {
    if (node.type === APPLICATION) {
      const op = String(node.body.operationId);
      shards.set(op, (shards.get(op) ?? 0) + 1);
    }
  }
  const boxes: Box[] = [];
  const edges: Edge[] = [];
  const seen = new Set<string>();
  const link = (from: string, to: string): void => {
    const key = `${from}->${to}`;
    if (!seen.has(key)) {
      seen.add(key);
      edges.push({ from, to });
    }
  };
  for (const node of doc.nodes) {
    if (node.type === TENSOR) {
      boxes.push({ id: node.id, kind: "tensor", title: node.label ?? node.id.slice(0, 8), subtitle: tensorSubtitle(node), pinned: pinned(node) });
    } else if (node.type === OPERATION) {
      const kernel = String(node.body.kernel ?? "?");
      const n = shards.get(node.id) ?? 0;
      const title = node.label && node.label !== kernel ? `${node.label}: ${kernel}` : kernel;
      boxes.push({ id: node.id, kind: "operation", title, subtitle: n ? `${n} applications` : "whole", pinned: pinned(node) });
      for (const s of selections(node.body.inputs)) link(s.tensorId, node.id);
      for (const s of selections(node.body.outputs)) link(node.id, s.tensorId);
    }
  }
  const drawn = new Set(boxes.map((b) => b.id));
  return { boxes, edges: edges.filter((e) => drawn.has(e.from) && drawn.has(e.to)) };
}

/** How many issues name each node. */
export function issuesByNode(issues: Issue[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const issue of issues) for (const id of issue.nodeIds) counts.set(id, (counts.get(id) ?? 0) + 1);
  return counts;
}
