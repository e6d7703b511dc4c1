// The clipboard: copy the selected tensors and operations, paste them as new nodes (DESIGN.md §6
// add_node ops) with fresh ids, their Layout tags shifted, their wiring kept among the copies.

import { uuid } from "./author";
import {
  LAYOUT,
  nodeById,
  OPERATION,
  selections,
  TENSOR,
  type LoomDocument,
  type LoomNode,
  type Point,
  type Selection,
} from "./document";
import type { EditOp } from "./edits";

export interface Clip {
  nodes: LoomNode[];
}

/** The selected tensors and operations (and the axes they use), for the clipboard. */
export function copyNodes(doc: LoomDocument, ids: string[]): Clip {
  const chosen = new Set(ids);
  return {
    nodes: structuredClone(
      doc.nodes.filter((n) => chosen.has(n.id) && (n.type === TENSOR || n.type === OPERATION)),
    ),
  };
}

/**
 * Paste copies with new ids, shifted by ``offset``. Selections among the copies point to the
 * copies; an operation keeps reading tensors that were not copied, and drops outputs that were
 * not copied (a tensor has one writer).
 */
export function pasteNodes(
  doc: LoomDocument,
  clip: Clip,
  offset: Point,
): { ops: EditOp[]; ids: string[] } {
  const remap = new Map(clip.nodes.map((n) => [n.id, uuid()]));
  const existing = nodeById(doc);
  const ops: EditOp[] = [];
  for (const n of clip.nodes) {
    const node = structuredClone(n);
    node.id = remap.get(n.id)!;
    const at = node.tags?.[LAYOUT] as Point | undefined;
    if (at) node.tags![LAYOUT] = { x: at.x + offset.x, y: at.y + offset.y };
    if (node.type === OPERATION) {
      for (const side of ["inputs", "outputs"] as const) {
        const io: Record<string, Selection[]> = {};
        for (const [key, list] of selections(node.body[side])) {
          const mapped = list
            .filter((s) => remap.has(s.tensorId) || (side === "inputs" && existing.has(s.tensorId)))
            .map((s) => ({ ...s, tensorId: remap.get(s.tensorId) ?? s.tensorId }));
          if (mapped.length) io[key] = mapped;
        }
        node.body[side] = io;
      }
    }
    ops.push({ op: "add_node", node });
  }
  return { ops, ids: [...remap.values()] };
}
