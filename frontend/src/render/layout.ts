// Positions for the boxes of a graph view: ELK's layered layout, left to right along the data
// flow, except for nodes that carry a Layout tag, which stay where the tag puts them.

import ELK from "elkjs/lib/elk.bundled.js";
import type { BoxKind, GraphView } from "../model/document";

export interface Rect {
  x: number;
  y: number;
  w: number;
  h: number;
}

export interface Layout {
  rects: Map<string, Rect>;
  width: number;
  height: number;
}

export const BOX_SIZE: Record<BoxKind, { w: number; h: number }> = {
  tensor: { w: 190, h: 54 },
  operation: { w: 150, h: 46 },
};

const elk = new ELK();

export async function layoutView(view: GraphView): Promise<Layout> {
  const graph = {
    id: "root",
    layoutOptions: {
      "elk.algorithm": "layered",
      "elk.direction": "RIGHT",
      "elk.spacing.nodeNode": "32",
      "elk.layered.spacing.nodeNodeBetweenLayers": "56",
      "elk.padding": "[top=24,left=24,bottom=24,right=24]",
    },
    children: view.boxes.map((b) => ({ id: b.id, width: BOX_SIZE[b.kind].w, height: BOX_SIZE[b.kind].h })),
    edges: view.edges.map((e, i) => ({ id: `e${i}`, sources: [e.from], targets: [e.to] })),
  };
  const placed = await elk.layout(graph);
  const rects = new Map<string, Rect>();
  for (const child of placed.children ?? []) {
    const box = view.boxes.find((b) => b.id === child.id);
    const at = box?.pinned ?? { x: child.x ?? 0, y: child.y ?? 0 };
    rects.set(child.id, { x: at.x, y: at.y, w: child.width ?? 0, h: child.height ?? 0 });
  }
  let width = 0;
  let height = 0;
  for (const r of rects.values()) {
    width = Math.max(width, r.x + r.w + 24);
    height = Math.max(height, r.y + r.h + 24);
  }
  return { rects, width, height };
}
