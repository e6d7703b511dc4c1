// The edit actions that read what the user sees as well as the document (Excalidraw's
// ``perform``): each takes the UI state (selection, drawn boxes, viewport) and returns the
// builder of one edit's ops, with what to select once they are shown. Nothing here changes state
// or sends; the editor's ``perform`` runs the builder on the shown document.

import { deleteNodes } from "../model/author";
import { addTensor, type TensorInput } from "../model/authorTensors";
import { addOperation } from "../model/authorOperations";
import { pasteNodes, type Clip } from "../model/clipboard";
import { LAYOUT, nodeById, TENSOR, type LoomDocument } from "../model/document";
import type { EditOp } from "../model/edits";
import { clearLayout } from "../model/nodeEdits";
import { freeSpot, pinnedClip, spotRightOf, type Size } from "../render/placement";
import type { Rect, Viewport } from "../render/viewport";

/** What an action builds: the ops of one edit, and what to select once they are shown. */
export type Built = EditOp[] | { ops: EditOp[]; select: string[] };
export type Build = (doc: LoomDocument) => Built;

/** What the user sees. */
export interface Seen {
  selected: readonly string[];
  rects: ReadonlyMap<string, Rect>;
  vp: Viewport;
  size: Size;
}

/** A new tensor in the middle of the view, selected. */
export function addTensorAction(input: Omit<TensorInput, "at">, seen: Seen): Build {
  return (doc) => {
    const { ops, id } = addTensor(doc, { ...input, at: freeSpot(seen.rects, seen.vp, seen.size) });
    return { ops, select: [id] };
  };
}

/** A new operation of ``kernel`` fed by the selected tensors, right of them (else mid-view), selected. */
export function addOperationAction(kernel: string, seen: Seen): Build {
  return (doc) => {
    const tensors = seen.selected.filter((id) => nodeById(doc).get(id)?.type === TENSOR);
    const at = spotRightOf(seen.rects, tensors) ?? freeSpot(seen.rects, seen.vp, seen.size);
    const { ops, id } = addOperation(doc, kernel, at, tensors);
    return { ops, select: [id] };
  };
}

/** The copied nodes again, 40 px down and right of where the originals are drawn, selected. */
export function pasteAction(clip: Clip, seen: Seen): Build {
  return (doc) => {
    const { ops, ids } = pasteNodes(doc, pinnedClip(clip, seen.rects), { x: 40, y: 40 });
    return { ops, select: ids };
  };
}

export function deleteAction(seen: Seen): Build {
  const ids = [...seen.selected];
  return (doc) => deleteNodes(doc, ids);
}

/** "Lay out again": the selected nodes (none selected: every placed node) lose their Layout tags. */
export function relayoutAction(seen: Seen): Build {
  return (doc) =>
    clearLayout(
      doc,
      seen.selected.length
        ? [...seen.selected]
        : doc.nodes.filter((n) => n.tags?.[LAYOUT]).map((n) => n.id),
    );
}
