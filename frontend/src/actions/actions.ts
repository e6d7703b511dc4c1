// User commands as registered actions: a name, a title, key bindings, and what they do through
// the editor's command surface. The toolbar, the keyboard and the test API all run them by name.

export interface Commands {
  undo(): void;
  redo(): void;
  deleteSelection(): void;
  copy(): void;
  paste(): void;
  selectAll(): void;
  zoomToFit(): void;
  zoomBy(factor: number): void;
  relayout(): void;
  openPalette(): void;
  newTensor(): void;
  newAxis(): void;
  focusSearch(): void;
  cancel(): void;
  help(): void;
  history(): void;
  /** The groups of the canvas (ui/groupControls.ts). */
  readonly groups: GroupCommands;
}

/** What the group actions do (imported graphs group by name scope). */
export interface GroupCommands {
  /** The selected group, else the group around the first selected node; false when neither. */
  toggleSelected(): boolean;
  collapseAll(): void;
  expandAll(): void;
}

export interface Action {
  name: string;
  title: string;
  /** "Mod" is Ctrl, or Cmd on a Mac. */
  keys: string[];
  run(c: Commands): void;
}

export const ACTIONS: Action[] = [
  { name: "undo", title: "Undo", keys: ["Mod+z"], run: (c) => c.undo() },
  { name: "redo", title: "Redo", keys: ["Mod+Shift+z", "Mod+y"], run: (c) => c.redo() },
  {
    name: "delete",
    title: "Delete the selection",
    keys: ["Delete", "Backspace"],
    run: (c) => c.deleteSelection(),
  },
  { name: "copy", title: "Copy", keys: ["Mod+c"], run: (c) => c.copy() },
  { name: "paste", title: "Paste", keys: ["Mod+v"], run: (c) => c.paste() },
  { name: "selectAll", title: "Select all", keys: ["Mod+a"], run: (c) => c.selectAll() },
  { name: "zoomToFit", title: "Zoom to fit", keys: ["f", "Shift+1"], run: (c) => c.zoomToFit() },
  {
    name: "zoomIn",
    title: "Zoom in",
    keys: ["=", "Shift++", "Shift+="],
    run: (c) => c.zoomBy(1.25),
  },
  { name: "zoomOut", title: "Zoom out", keys: ["-"], run: (c) => c.zoomBy(0.8) },
  {
    name: "relayout",
    title: "Lay out again (keeps placed nodes)",
    keys: ["l"],
    run: (c) => c.relayout(),
  },
  { name: "palette", title: "Add an operation", keys: ["o", "Mod+k"], run: (c) => c.openPalette() },
  { name: "newTensor", title: "Add a tensor", keys: ["t"], run: (c) => c.newTensor() },
  { name: "newAxis", title: "Declare an axis", keys: ["a"], run: (c) => c.newAxis() },
  { name: "search", title: "Search the graph", keys: ["/", "Mod+f"], run: (c) => c.focusSearch() },
  {
    name: "cancel",
    title: "Cancel / clear the selection",
    keys: ["Escape"],
    run: (c) => c.cancel(),
  },
  {
    name: "history",
    title: "History: every version, view or restore one",
    keys: ["h"],
    run: (c) => c.history(),
  },
  { name: "help", title: "Shortcuts and help", keys: ["?", "Shift+?"], run: (c) => c.help() },
  {
    name: "toggleGroup",
    title: "Expand or collapse the selected group (a node selected: collapse its group)",
    keys: ["Enter", "g"],
    run: (c) => void c.groups.toggleSelected(),
  },
  {
    name: "collapseAll",
    title: "Collapse every group to one box",
    keys: ["Shift+g"],
    run: (c) => c.groups.collapseAll(),
  },
  {
    name: "expandAll",
    title: "Expand every group",
    keys: ["Shift+e"],
    run: (c) => c.groups.expandAll(),
  },
];

/** Actions whose key is also how a focused control is used (Enter presses a button): not run then. */
export const CONTROL_KEYS = new Set(["Enter"]);

export interface KeyLike {
  key: string;
  ctrlKey: boolean;
  metaKey: boolean;
  shiftKey: boolean;
  altKey: boolean;
}

/** "Mod+Shift+z" for Ctrl+Shift+Z. Letters are lower case; Shift is named for letters and symbols alike. */
export function keyName(e: KeyLike): string {
  const parts: string[] = [];
  if (e.ctrlKey || e.metaKey) parts.push("Mod");
  if (e.altKey) parts.push("Alt");
  const key = e.key.length === 1 ? e.key.toLowerCase() : e.key;
  if (e.shiftKey && key !== "Shift") parts.push("Shift");
  parts.push(key === "!" ? "1" : key);
  return parts.join("+");
}

export function actionForKey(e: KeyLike, actions: Action[] = ACTIONS): Action | null {
  const name = keyName(e);
  return actions.find((a) => a.keys.includes(name)) ?? null;
}

export function action(name: string): Action {
  const found = ACTIONS.find((a) => a.name === name);
  if (!found)
    throw new Error(
      `action "${name}" is not registered; expected one of (${ACTIONS.map((a) => `"${a.name}"`).join(", ")})`,
    );
  return found;
}

/** "Ctrl+Z" (or "⌘Z" on a Mac) for a tooltip. */
export function shortcutLabel(a: Action, mac = false): string {
  const k = a.keys[0] ?? "";
  return k
    .split("+")
    .map((p) => (p === "Mod" ? (mac ? "⌘" : "Ctrl") : p.length === 1 ? p.toUpperCase() : p))
    .join(mac ? "" : "+");
}
