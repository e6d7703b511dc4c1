// The LoomGraph document as the editor sees it (DESIGN.md §3), and the view derived from it:
// which boxes to draw (tensors and operations, with their axis chips) and which edges join them.

import { baseNames, parseRef, refLength, type AxisDecl, type Declared } from "./axes";

const LOOM = "http://tensortapestry.org/schemas/loom/2024-01/";
const GEON = "urn:geon:2026-11:";
export const TENSOR = `${LOOM}node_types.jsd#/nodes/Tensor`;
export const OPERATION = `${LOOM}node_types.jsd#/nodes/Operation`;
export const APPLICATION = `${LOOM}node_types.jsd#/nodes/Application`;
export const NOTE = `${LOOM}node_types.jsd#/nodes/Note`;
export const AXIS = `${GEON}node_types.jsd#/nodes/Axis`;
export const TENSOR_AXES = `${GEON}tag_types.jsd#/tags/TensorAxes`;
export const INDEX_AXES = `${GEON}tag_types.jsd#/tags/IndexAxes`;
export const LAYOUT = `${GEON}tag_types.jsd#/tags/Layout`;
export const IPF_SIGNATURE = `${LOOM}tag_types.jsd#/tags/IPFSignature`;
export const IPF_INDEX = `${LOOM}tag_types.jsd#/tags/IPFIndex`;

export const ROLES = ["Channel", "Channelout", "Depth", "Height", "Time", "Width"] as const;
export const DTYPES = [
  "float32",
  "float64",
  "float16",
  "int32",
  "int64",
  "int8",
  "int16",
  "uint8",
  "boolean",
  "complex64",
  "complex128",
] as const;

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

export interface IssueContext {
  name: string;
  jsonpath: string;
  data?: unknown;
}

export interface Issue {
  constraint: string;
  type: string;
  severity: "error" | "warning" | "info";
  summary: string;
  message: string;
  nodeIds: string[];
  params?: Record<string, unknown>;
  contexts?: IssueContext[];
}

export interface Point {
  x: number;
  y: number;
}

export interface Range {
  start: number[];
  end: number[];
}

export interface Selection {
  tensorId: string;
  range: Range;
}

export type BoxKind = "tensor" | "operation";

export interface Chip {
  /** The reference as written, e.g. "W-1". */
  ref: string;
  /** The axis name the colour belongs to ("W"). */
  axis: string;
  length: number | null;
}

export interface Box {
  id: string;
  kind: BoxKind;
  title: string;
  subtitle: string;
  chips: Chip[];
  /** The position from the node's Layout tag, when it has one. */
  pinned?: Point;
}

export interface Edge {
  from: string;
  to: string;
  /** The operation's IO key the edge enters or leaves by ("x", "tensors", "result"). */
  port: string;
}

export interface GraphView {
  boxes: Box[];
  edges: Edge[];
}

export function nodeById(doc: LoomDocument): Map<string, LoomNode> {
  return new Map(doc.nodes.map((n) => [n.id, n]));
}

/** How people read a node (the server's ``Node.name``): its label, then its body's name (an
 * axis, a mesh), then its kernel, then its id. */
export function nodeName(node: LoomNode): string {
  const body = node.body ?? {};
  if (node.label) return node.label;
  if (typeof body.name === "string" && body.name) return body.name;
  if (typeof body.kernel === "string" && body.kernel) return body.kernel;
  return node.id;
}

/** Axis declarations by name, in document order. */
export function declaredAxes(doc: LoomDocument): Map<string, AxisDecl & { id: string }> {
  const out = new Map<string, AxisDecl & { id: string }>();
  for (const n of doc.nodes) {
    if (n.type !== AXIS) continue;
    const b = n.body as unknown as AxisDecl;
    if (typeof b.name === "string" && !out.has(b.name)) out.set(b.name, { ...b, id: n.id });
  }
  return out;
}

/** The TensorAxes of a tensor, or null for a positional tensor. */
export function tensorAxes(node: LoomNode | undefined): string[] | null {
  const axes = (node?.tags?.[TENSOR_AXES] as { axes?: unknown } | undefined)?.axes;
  return Array.isArray(axes) && axes.every((a) => typeof a === "string")
    ? (axes as string[])
    : null;
}

export function tensorRange(node: LoomNode | undefined): Range | null {
  const r = node?.body.range as Range | undefined;
  return r && Array.isArray(r.start) && Array.isArray(r.end) ? r : null;
}

/**
 * Each selection's port and tensor id in ``io`` (what ``selections`` holds), without building its
 * map: the view of a 5,000-operation graph walks every operation's inputs and outputs.
 */
export function eachTensor(io: unknown, visit: (port: string, tensorId: string) => void): void {
  if (io === null || typeof io !== "object") return;
  for (const port in io as Record<string, unknown>) {
    const list = (io as Record<string, unknown>)[port];
    if (!Array.isArray(list)) continue;
    for (const s of list as Selection[])
      if (typeof s?.tensorId === "string") visit(port, s.tensorId);
  }
}

export function selections(io: unknown): Map<string, Selection[]> {
  const out = new Map<string, Selection[]>();
  if (io === null || typeof io !== "object") return out;
  for (const [key, list] of Object.entries(io as Record<string, unknown>)) {
    if (Array.isArray(list))
      out.set(
        key,
        (list as Selection[]).filter((s) => typeof s?.tensorId === "string"),
      );
  }
  return out;
}

export function pinned(node: LoomNode): Point | undefined {
  const tag = node.tags?.[LAYOUT] as Partial<Point> | undefined;
  if (tag && typeof tag.x === "number" && typeof tag.y === "number") return { x: tag.x, y: tag.y };
  return undefined;
}

/** The names of the axes in order of declaration: their colours follow this order. */
export function axisOrder(doc: LoomDocument): string[] {
  return [...declaredAxes(doc).keys()];
}

/** The tag marking a trainable parameter (DESIGN.md §11): its tensor box reads "variable". */
export const VARIABLE_TAG = "urn:geon:2026-11:tag_types.jsd#/tags/Variable";

function tensorChips(node: LoomNode, declared: Declared): { chips: Chip[]; subtitle: string } {
  const range = tensorRange(node);
  const variable = node.tags?.[VARIABLE_TAG] !== undefined ? "variable · " : "";
  const dtype = variable + String(node.body.dtype ?? "?");
  const shape = range ? range.start.map((s, i) => (range.end[i] ?? s) - s) : [];
  const axes = tensorAxes(node);
  const origin = range && range.start.some((s) => s !== 0) ? ` @[${range.start.join(", ")}]` : "";
  if (axes && axes.length === shape.length) {
    const chips = axes.map((ref, i) => {
      let axis = ref;
      try {
        axis = baseNames(ref).join("*");
        parseRef(ref);
      } catch {
        /* a bad reference is drawn as written; the server reports it */
      }
      return { ref, axis, length: refLength(safe(ref), declared) ?? shape[i] ?? null };
    });
    return { chips, subtitle: `${dtype}${origin}` };
  }
  return { chips: [], subtitle: `${dtype} (${shape.join("×") || "scalar"})${origin}` };
}

function safe(ref: string): string {
  try {
    parseRef(ref);
    return ref;
  } catch {
    return "_";
  }
}

/**
 * A tensor's box. Its chips and subtitle are worked out when first read: a large graph opens with
 * its groups collapsed, and the boxes inside them are not drawn until a group opens.
 */
function tensorBox(node: LoomNode, title: string, declared: Declared): Box {
  let made: { chips: Chip[]; subtitle: string } | undefined;
  return {
    id: node.id,
    kind: "tensor",
    title,
    get subtitle() {
      return (made ??= tensorChips(node, declared)).subtitle;
    },
    get chips() {
      return (made ??= tensorChips(node, declared)).chips;
    },
    pinned: pinned(node),
  };
}

/** The boxes and edges to draw for a document: tensors, operations and the data flow. */
export function graphView(doc: LoomDocument): GraphView {
  const declared = declaredAxes(doc);
  const shards = new Map<string, number>();
  for (const node of doc.nodes) {
    if (node.type === APPLICATION) {
      const op = String(node.body.operationId);
      shards.set(op, (shards.get(op) ?? 0) + 1);
    }
  }
  const boxes: Box[] = [];
  const edges: Edge[] = [];
  // an edge joins an operation and a tensor, so it can repeat only within one operation's inputs
  // (or outputs): the first port that names the tensor is kept
  let linked: string[] = [];
  const link = (from: string, to: string, port: string, tensor: string): void => {
    if (linked.includes(tensor)) return;
    linked.push(tensor);
    edges.push({ from, to, port });
  };
  // an unlabelled tensor is named after the kernel that writes it ("dot out"), not its raw id
  const producer = new Map<string, string>();
  for (const node of doc.nodes) {
    if (node.type !== OPERATION) continue;
    const name = node.label ?? String(node.body.kernel ?? "").replace(/^op:/, "");
    eachTensor(node.body.outputs, (_, t) => {
      if (!producer.has(t)) producer.set(t, name);
    });
  }
  for (const node of doc.nodes) {
    if (node.type === TENSOR) {
      const from = producer.get(node.id);
      const title = node.label ?? (from ? `${from} out` : node.id.slice(0, 8));
      boxes.push(tensorBox(node, title, declared));
    } else if (node.type === OPERATION) {
      const kernel = String(node.body.kernel ?? "?");
      const n = shards.get(node.id) ?? 0;
      const title = node.label && node.label !== kernel ? `${node.label}: ${kernel}` : kernel;
      boxes.push({
        id: node.id,
        kind: "operation",
        title,
        subtitle: n ? `${n} application${n === 1 ? "" : "s"}` : "whole",
        chips: [],
        pinned: pinned(node),
      });
      linked = [];
      eachTensor(node.body.inputs, (port, t) => link(t, node.id, port, t));
      linked = [];
      eachTensor(node.body.outputs, (port, t) => link(node.id, t, port, t));
    }
  }
  const drawn = new Set(boxes.map((b) => b.id));
  return { boxes, edges: edges.filter((e) => drawn.has(e.from) && drawn.has(e.to)) };
}

/** The issues naming each node. */
export function issuesByNode(issues: Issue[]): Map<string, Issue[]> {
  const out = new Map<string, Issue[]>();
  for (const issue of issues) {
    for (const id of issue.nodeIds) {
      const list = out.get(id) ?? [];
      list.push(issue);
      out.set(id, list);
    }
  }
  return out;
}

/** The axis references an issue names in quotes ("W" in 'axis "W" appears ...'), for pinning to chips. */
export function issueAxes(issue: Issue): string[] {
  const out: string[] = [];
  for (const m of issue.message.matchAll(/"([A-Za-z_][A-Za-z0-9_]*(?:[+-][0-9]+)?)"/g))
    if (!out.includes(m[1]!)) out.push(m[1]!);
  return out;
}

/** Search the graph: nodes whose label, kernel or axes contain the text (case-insensitive). */
export function searchNodes(doc: LoomDocument, text: string): string[] {
  const q = text.trim().toLowerCase();
  if (!q) return [];
  return doc.nodes
    .filter((n) => n.type === TENSOR || n.type === OPERATION)
    .filter((n) => {
      const hay = [n.label ?? "", String(n.body.kernel ?? ""), ...(tensorAxes(n) ?? [])]
        .join(" ")
        .toLowerCase();
      return hay.includes(q);
    })
    .map((n) => n.id);
}
