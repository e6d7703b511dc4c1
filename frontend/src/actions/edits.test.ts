import { describe, expect, it } from "vitest";
import { addTensor } from "../model/authorTensors";
import { LAYOUT, TENSOR, type LoomDocument } from "../model/document";
import { applyOps, type EditOp } from "../model/edits";
import {
  addOperationAction,
  addTensorAction,
  deleteAction,
  pasteAction,
  relayoutAction,
  type Built,
  type Seen,
} from "./edits";

const seen = (
  selected: string[],
  rects = new Map<string, { x: number; y: number; w: number; h: number }>(),
): Seen => ({ selected, rects, vp: { scale: 1, dx: 0, dy: 0 }, size: { width: 800, height: 600 } });
const opsOf = (built: Built): EditOp[] => (Array.isArray(built) ? built : built.ops);
const selectOf = (built: Built): string[] | null => (Array.isArray(built) ? null : built.select);

function withTensor(): { doc: LoomDocument; x: string } {
  const { ops, id } = addTensor(
    { id: "g", nodes: [] },
    { label: "x", axes: [], at: { x: 0, y: 0 } },
  );
  return { doc: applyOps({ id: "g", nodes: [] }, ops), x: id };
}

describe("edit actions", () => {
  it("adds a tensor in the middle of the view and selects it", () => {
    const built = addTensorAction({ label: "t", axes: [] }, seen([]))({ id: "g", nodes: [] });
    const node = opsOf(built).flatMap((op) => (op.op === "add_node" ? [op.node] : []))[0]!;
    expect([node.label, node.tags?.[LAYOUT], selectOf(built)]).toEqual([
      "t",
      { x: 320, y: 270 },
      [node.id],
    ]);
  });

  it("adds an operation fed by the selected tensor, right of it, and selects it", () => {
    const { doc, x } = withTensor();
    const built = addOperationAction(
      "op:relu",
      seen([x], new Map([[x, { x: 0, y: 0, w: 100, h: 50 }]])),
    )(doc);
    const after = applyOps(doc, opsOf(built));
    const op = after.nodes.find((n) => n.body.kernel === "op:relu")!;
    expect([op.tags?.[LAYOUT], selectOf(built)]).toEqual([{ x: 170, y: 2 }, [op.id]]);
  });

  it("deletes the selection", () => {
    const { doc, x } = withTensor();
    expect(applyOps(doc, opsOf(deleteAction(seen([x]))(doc))).nodes).toEqual([]);
  });

  it("pastes copies next to the originals and selects them", () => {
    const { doc, x } = withTensor();
    const clip = { nodes: doc.nodes.filter((n) => n.id === x).map((n) => ({ ...n, tags: {} })) };
    const built = pasteAction(clip, seen([], new Map([[x, { x: 10, y: 20, w: 100, h: 50 }]])))(doc);
    const copy = applyOps(doc, opsOf(built)).nodes.find((n) => n.type === TENSOR && n.id !== x)!;
    expect([copy.tags?.[LAYOUT], selectOf(built)]).toEqual([{ x: 50, y: 60 }, [copy.id]]);
  });

  it("lays out again every placed node when none is selected", () => {
    const { doc, x } = withTensor();
    expect(opsOf(relayoutAction(seen([]))(doc))).toEqual([
      { op: "update_node", id: x, tags: { [LAYOUT]: null } },
    ]);
  });
});
