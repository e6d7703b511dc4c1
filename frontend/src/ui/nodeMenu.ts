// The editor's right-click menu: the actions for the node under the pointer (selected first) or
// for the canvas; editing is disabled, with the reason, for a read-only role.

import type { GraphView } from "../model/document";
import type { ContextMenu, MenuItem } from "./help";
import { menuItems } from "./menus";

/** The actions a read-only role cannot use (the right-click menu disables them). */
const EDITING = new Set(["paste", "palette", "newTensor", "newAxis", "delete", "relayout"]);

/** What the menu reads and runs (the editor). */
export interface MenuHost {
  readonly view: GraphView | null;
  readonly selected: string[];
  readonly extras: { explain?: (id: string) => void };
  setSelection(ids: string[]): void;
  runAction(name: string): void;
  openProjection(id: string): void;
  /** The group items of the menu: the node's group, then collapse and expand all. */
  readonly groups: { menuFor(target: { id: string | null }): MenuItem[] };
}

/** Show the menu of node ``id`` (null: the canvas) at client x, y; ``readOnly``: why editing is off, if it is. */
export function showNodeMenu(
  menu: ContextMenu,
  host: MenuHost,
  readOnly: string | undefined,
  id: string | null,
  x: number,
  y: number,
): void {
  if (id && !host.selected.includes(id)) host.setSelection([id]);
  const kind = id ? (host.view?.boxes.find((b) => b.id === id)?.kind ?? "node") : null;
  const explain = host.extras.explain;
  const node = id
    ? { explain: explain && (() => explain(id)), projection: () => host.openProjection(id) }
    : {};
  const items = menuItems(
    kind,
    (name) => host.runAction(name),
    node,
    (a) => (EDITING.has(a) ? readOnly : undefined),
  );
  menu.show(x, y, [...items, ...host.groups.menuFor({ id })]);
}
