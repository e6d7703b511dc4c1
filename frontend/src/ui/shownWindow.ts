// "Comment on selection" in the Reviews panel pins a thread to the window the projection window
// shows: the index range of the selected application of its operation, else its whole index space.

import type { LoomDocument } from "../model/document";
import { operationProjection } from "../model/projection";
import type { ShownWindow } from "../model/reviews";

/** The window of ``operation`` (the projection window's; null when that window is closed). */
export function shownWindow(
  doc: LoomDocument | null,
  visible: boolean,
  operation: string | null,
  selected: readonly string[],
): ShownWindow | null {
  if (!doc || !visible || operation === null) return null;
  const view = operationProjection(doc, operation);
  const app = view?.applications.find((a) => selected.includes(a.id));
  const range = app?.index ?? view?.indexRange;
  return range ? { operation, start: [...range.start], end: [...range.end] } : null;
}
