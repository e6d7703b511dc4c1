// Help in the editor (issue 21, "No help"): the shortcut overlay ("?"), generated from the action
// registry so it can never disagree with the keys; the right-click menu with the same actions
// on nodes and on the canvas; and a short tour, offered by the toolbar's help button until it was
// seen once in this browser, and reopened from the overlay.

import "./help.css";
import type { Action } from "../actions/actions";
import { button, el } from "./dom";

/** The sections of the overlay, by action name; an action not listed goes under "Other". */
export const GROUPS: [string, string[]][] = [
  ["Edit", ["undo", "redo", "delete", "copy", "paste", "selectAll"]],
  ["Add", ["palette", "newTensor", "newAxis"]],
  ["View", ["zoomToFit", "zoomIn", "zoomOut", "relayout", "search", "cancel"]],
  ["Panels", ["history", "help"]],
  ["Groups", ["toggleGroup", "collapseAll", "expandAll"]],
];

/** What the mouse does (not actions: no keys). */
export const GESTURES: [string, string][] = [
  ["Click", "select a node; Shift+click adds to the selection"],
  ["Drag a node", "move it (the layout keeps it there)"],
  ["Drag a tensor's round handle onto an operation", "connect them"],
  ["Drag the canvas / wheel", "pan / zoom"],
  ["Right-click", "the actions for what is under the pointer"],
  [
    "Click a group's ▸ / ▾, or double-click it",
    "expand or collapse it (imported graphs group by name scope); right-click it for its menu",
  ],
];

/** "Ctrl+Shift+Z" (or "⌘⇧Z" on a Mac) for one key binding. */
export function keyLabel(key: string, mac = false): string {
  const names: Record<string, string> = mac ? { Mod: "⌘", Shift: "⇧", Alt: "⌥" } : { Mod: "Ctrl" };
  // the last part is the key itself, which may be "+" ("Shift++")
  const raw = key.endsWith("+")
    ? [...key.slice(0, -1).split("+").filter(Boolean), "+"]
    : key.split("+");
  const parts = raw.map((p) => names[p] ?? (p.length === 1 ? p.toUpperCase() : p));
  return parts.join(mac ? "" : "+");
}

export interface HelpRow {
  name: string;
  title: string;
  keys: string[];
}

/** The overlay's sections: each group's actions in the registry, with every key of each. */
export function helpSections(actions: Action[], mac = false): { title: string; rows: HelpRow[] }[] {
  const listed = new Set(GROUPS.flatMap(([, names]) => names));
  const row = (a: Action): HelpRow => ({
    name: a.name,
    title: a.title,
    keys: a.keys.map((k) => keyLabel(k, mac)),
  });
  const sections = GROUPS.map(([title, names]) => ({
    title,
    rows: names.flatMap((n) => actions.filter((a) => a.name === n)).map(row),
  }));
  sections.push({ title: "Other", rows: actions.filter((a) => !listed.has(a.name)).map(row) });
  return sections.filter((s) => s.rows.length > 0);
}

export interface HelpOverlay {
  element: HTMLDialogElement;
  open(): void;
}

/** The "?" overlay; ``onTour`` starts the tour again. */
export function createHelp(
  actions: Action[],
  onTour: () => void,
  mac = /Mac|iPhone|iPad/.test(navigator.platform),
): HelpOverlay {
  const close = button("Close", "Close (Escape)", () => element.close());
  const tour = button(
    "Take the tour again",
    "The short tour of the editor shown on a first visit",
    () => {
      element.close();
      onTour();
    },
  );
  const sections = helpSections(actions, mac).map((s) =>
    el(
      "section",
      { class: "geon-help-section" },
      el("h3", { text: s.title }),
      el(
        "dl",
        {},
        ...s.rows.flatMap((r) => [
          el("dt", { "data-action": r.name }, ...r.keys.map((k) => el("kbd", { text: k }))),
          el("dd", { text: r.title }),
        ]),
      ),
    ),
  );
  const mouse = el(
    "section",
    { class: "geon-help-section geon-help-mouse" },
    el("h3", { text: "Mouse" }),
    el(
      "dl",
      {},
      ...GESTURES.flatMap(([g, what]) => [el("dt", { text: g }), el("dd", { text: what })]),
    ),
  );
  const element = el(
    "dialog",
    { class: "geon-dialog geon-help", "aria-label": "Keyboard shortcuts and help" },
    el("div", { class: "geon-help-head" }, el("h2", { text: "Shortcuts and help" }), tour, close),
    el("div", { class: "geon-help-grid" }, ...sections, mouse),
  );
  element.addEventListener("click", (e) => {
    if (e.target === element) element.close();
  });
  document.body.append(element);
  return {
    element,
    open: () => {
      if (!element.open) element.showModal();
    },
  };
}

// --- the context menu -----------------------------------------------------------------------

export interface MenuItem {
  label: string;
  /** The key shown beside it. */
  keys?: string;
  /** Why it cannot be used now (the item shows disabled with this as its tooltip). */
  disabled?: string;
  run(): void;
}

export interface ContextMenu {
  element: HTMLElement;
  show(x: number, y: number, items: MenuItem[]): void;
  hide(): void;
}

/** A menu at the pointer: arrows move, Enter runs, Escape or a click elsewhere closes. */
export function createContextMenu(): ContextMenu {
  const element = el("div", { class: "geon-menu", role: "menu", hidden: "" });
  const hide = (): void => {
    element.hidden = true;
    element.replaceChildren();
  };
  const show = (x: number, y: number, items: MenuItem[]): void => {
    element.replaceChildren(
      ...items.map((item) => {
        const b = el(
          "button",
          { type: "button", role: "menuitem", class: "geon-menu-item", title: item.disabled ?? "" },
          el("span", { text: item.label }),
          el("kbd", { text: item.keys ?? "" }),
        );
        b.disabled = item.disabled !== undefined;
        b.addEventListener("click", () => {
          hide();
          item.run();
        });
        return b;
      }),
    );
    element.hidden = false;
    const box = element.getBoundingClientRect();
    element.style.left = `${Math.min(x, window.innerWidth - box.width - 4)}px`;
    element.style.top = `${Math.min(y, window.innerHeight - box.height - 4)}px`;
    element.querySelector<HTMLButtonElement>("button:not(:disabled)")?.focus();
  };
  element.addEventListener("keydown", (e) => {
    const buttons = [...element.querySelectorAll<HTMLButtonElement>("button:not(:disabled)")];
    const at = buttons.indexOf(document.activeElement as HTMLButtonElement);
    if (e.key === "Escape") hide();
    else if (e.key === "ArrowDown" || e.key === "ArrowUp") {
      e.preventDefault();
      const next = (at + (e.key === "ArrowDown" ? 1 : buttons.length - 1)) % buttons.length;
      buttons[next]?.focus();
    }
  });
  document.addEventListener("pointerdown", (e) => {
    if (!element.hidden && !element.contains(e.target as Node)) hide();
  });
  document.body.append(element);
  return { element, show, hide };
}

// --- the tour -------------------------------------------------------------------------------

export interface TourStep {
  /** The element the step points at (a CSS selector); a missing one centres the card. */
  target: string;
  title: string;
  text: string;
}

/** The key that remembers, per browser, that the tour was seen. */
export const TOUR_SEEN = "geon.tour.v1";

/** The tour: a card beside each step's element, with Back / Next / Done; Escape ends it. */
export function createTour(
  steps: TourStep[],
  storage: Pick<Storage, "getItem" | "setItem"> = localStorage,
): { start(): void; seen(): boolean } {
  const card = el("div", {
    class: "geon-tour",
    role: "dialog",
    "aria-label": "Tour of the editor",
    hidden: "",
  });
  const ring = el("div", { class: "geon-tour-ring", hidden: "" });
  document.body.append(ring, card);
  let at = 0;
  const end = (): void => {
    card.hidden = ring.hidden = true;
    storage.setItem(TOUR_SEEN, "1");
    document.removeEventListener("keydown", onKey, true);
  };
  const onKey = (e: KeyboardEvent): void => {
    if (e.key === "Escape") {
      e.stopPropagation();
      end();
    }
  };
  const render = (): void => {
    const step = steps[at]!;
    const last = at === steps.length - 1;
    card.replaceChildren(
      el("p", { class: "geon-tour-count muted small", text: `${at + 1} of ${steps.length}` }),
      el("h3", { text: step.title }),
      el("p", { text: step.text }),
      el(
        "div",
        { class: "geon-tour-actions" },
        button("Skip", "End the tour (Escape)", end, "link"),
        ...(at > 0 ? [button("Back", "The step before", () => move(-1))] : []),
        button(
          last ? "Done" : "Next",
          last ? "End the tour" : "The next step",
          () => (last ? end() : move(1)),
          "primary",
        ),
      ),
    );
    const target = document.querySelector(step.target)?.getBoundingClientRect();
    card.hidden = false;
    ring.hidden = !target;
    const width = card.offsetWidth || 300;
    if (target) {
      Object.assign(ring.style, {
        left: `${target.left - 4}px`,
        top: `${target.top - 4}px`,
        width: `${target.width + 8}px`,
        height: `${target.height + 8}px`,
      });
      const below = target.bottom + 12 + card.offsetHeight < window.innerHeight;
      card.style.left = `${Math.max(8, Math.min(target.left, window.innerWidth - width - 8))}px`;
      card.style.top = `${below ? target.bottom + 12 : Math.max(8, target.top - card.offsetHeight - 12)}px`;
    } else {
      card.style.left = `${(window.innerWidth - width) / 2}px`;
      card.style.top = "30vh";
    }
    card.querySelector<HTMLButtonElement>(".primary")?.focus();
  };
  const move = (by: number): void => {
    at = Math.max(0, Math.min(steps.length - 1, at + by));
    render();
  };
  const start = (): void => {
    at = 0;
    document.addEventListener("keydown", onKey, true);
    render();
  };
  return { start, seen: () => storage.getItem(TOUR_SEEN) !== null };
}

/** The editor's tour: where things are, in five steps. */
export const EDITOR_TOUR: TourStep[] = [
  {
    target: "canvas.geon-canvas",
    title: "The graph",
    text: "Tensors are boxes labelled with their named axes; operations read and write them. Drag to pan, wheel to zoom, click to select.",
  },
  {
    target: ".geon-axes",
    title: "Axes",
    text: "Declare each axis once with its length. Tensors name their dimensions by axis; ops match, broadcast and contract by these names, and dot pairs W with its dual W-1.",
  },
  {
    target: ".geon-issues",
    title: "Checked as you type",
    text: "Every edit comes back checked by the server. Axis errors are pinned to the operation and explained in the Issues panel, often with a one-click fix.",
  },
  {
    target: ".geon-plans",
    title: "Plans",
    text: "Split operations over a device mesh, save the split as a plan, and compare plans by time, collectives and memory per device.",
  },
  {
    target: ".geon-version",
    title: "History and help",
    text: "Click the version for the history of the graph. Press ? for every shortcut, or right-click anything for its actions.",
  },
];
