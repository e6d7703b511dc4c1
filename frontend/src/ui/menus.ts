// What the right-click menu offers (issue 21, "No help"): the registered actions that apply to
// what is under the pointer, each with its key, plus the node's own commands (explain an
// operation, its index space). Pure: the editor shows the items.

import { ACTIONS, type Action } from "../actions/actions";
import { keyLabel, type MenuItem } from "./help";

/** The commands a node's menu may add (absent: not offered here). */
export interface NodeCommands {
  explain?: () => void;
  projection?: () => void;
}

const ON_NODE = ["copy", "delete"];
const ON_CANVAS = [
  "paste",
  "palette",
  "newTensor",
  "newAxis",
  "selectAll",
  "zoomToFit",
  "relayout",
  "history",
  "help",
];

/** The items for a node (``kind`` "operation", "tensor", ...) or, with ``kind`` null, the canvas;
 * ``disabled`` gives the reason an action cannot be used now (a role too small). */
export function menuItems(
  kind: string | null,
  run: (action: string) => void,
  node: NodeCommands = {},
  disabled: (action: string) => string | undefined = () => undefined,
  mac = false,
): MenuItem[] {
  const names = kind === null ? ON_CANVAS : ON_NODE;
  const own: MenuItem[] = [];
  if (kind === "operation" && node.explain)
    own.push({ label: "Explain step by step", run: node.explain });
  if (kind === "operation" && node.projection)
    own.push({ label: "Index space & projections", run: node.projection });
  const registered = names
    .flatMap((name) => ACTIONS.filter((a) => a.name === name))
    .map((a) => actionItem(a, () => run(a.name), disabled(a.name), mac));
  return [...own, ...registered];
}

/** The menu item of a registered action: its title, its first key, and what it runs. */
export function actionItem(a: Action, run: () => void, disabled?: string, mac = false): MenuItem {
  return { label: a.title, keys: keyLabel(a.keys[0] ?? "", mac), disabled, run };
}
