// A row of the plans section's list (ui/plans.ts): the plan's name (marked "current" when the
// document has its applications), one line for what it does, why it may be bad (ui/planWhyCard.ts),
// and its actions: switch to it, change its mapping, rename it in place, delete it (asked twice).

import type { PlansApi } from "../api/plans";
import type { Collective } from "../model/costs";
import type { LoomDocument } from "../model/document";
import { describePlan, isMapped, type Plan } from "../model/plans";
import { button, el, submit } from "./dom";
import { whyCard } from "./planWhyCard";

export interface PlanRowOptions {
  api: PlansApi;
  /** The document the plans section shows now. */
  doc(): LoomDocument | null;
  /** Run one server call; its refusal is shown and the list is left as it was. */
  attempt(work: () => Promise<string>): Promise<boolean>;
  /** Load the list of plans again. */
  reload(): Promise<void>;
  /** The current plan's collectives: its card says what running operations whole forces. */
  forced(): { plan: number; collectives: Collective[] } | null;
  switchPlan(p: Plan): void;
  startEditing(p: Plan): void;
  /** What a person is in the middle of, kept across renders (a reload from another device's
   * change draws the list again, and must not reset it). */
  held: RowsHeld;
}

/** The list's state that outlives its rows. */
export interface RowsHeld {
  /** The plan whose Delete was clicked once and waits to be confirmed. */
  confirming: number | null;
  /** The plan being renamed, and the name typed so far. */
  renaming: { plan: number; value: string } | null;
}

/** Plan ``p``'s row; ``current``: the plans whose applications the document has now. */
export function planRow(p: Plan, current: Set<number>, options: PlanRowOptions): HTMLElement {
  const { api, attempt, reload, switchPlan, startEditing, held } = options;
  const doc = options.doc();
  const forced = options.forced();
  const startRename = (p: Plan, title: HTMLElement, actions: HTMLElement, typed?: string): void => {
    held.renaming = { plan: p.id, value: typed ?? p.name };
    const input = el("input", {
      class: "geon-plan-rename-input",
      value: held.renaming.value,
      "aria-label": `new name of plan ${p.name}`,
      maxlength: "100",
    });
    const form = el(
      "form",
      { class: "geon-plan-rename-form" },
      input,
      submit("OK", "Rename (Enter); Escape cancels", "geon-plan-rename-ok"),
    );
    const cancel = (): void => {
      held.renaming = null;
      form.replaceWith(title);
      actions.hidden = false;
    };
    input.addEventListener("input", () => {
      if (held.renaming?.plan === p.id) held.renaming.value = input.value;
    });
    form.addEventListener("submit", (e) => {
      e.preventDefault();
      const next = input.value.trim();
      if (next === p.name) return cancel();
      void attempt(async () => {
        await api.update(p.id, { name: next });
        held.renaming = null;
        await reload();
        return `Renamed plan "${p.name}" to "${next}".`;
      }).then((ok) => {
        if (!ok) input.focus();
      });
    });
    input.addEventListener("keydown", (e) => {
      if (e.key === "Escape") {
        e.preventDefault();
        cancel();
      }
    });
    title.replaceWith(form);
    actions.hidden = true;
    // drawn again mid-rename, the list's render gives the input its focus back
    if (typed === undefined) {
      input.focus();
      input.select();
    }
  };

  const removePlan = async (p: Plan, b: HTMLButtonElement): Promise<void> => {
    if (held.confirming !== p.id) {
      held.confirming = p.id;
      b.textContent = "Really delete?";
      return;
    }
    held.confirming = null;
    await attempt(async () => {
      await api.remove(p.id);
      await reload();
      return `Deleted plan "${p.name}"; the document keeps its applications.`;
    });
  };

  const title = el("span", { class: "geon-plan-title", text: p.name });
  const row = el(
    "li",
    { class: "geon-plan", "data-plan": p.name },
    title,
    ...(current.has(p.id)
      ? [
          el("span", {
            class: "geon-plan-current",
            text: "current",
            title: "The document's applications are this plan's",
          }),
        ]
      : []),
    el("span", { class: "geon-plan-info small muted", text: describePlan(p) }),
  );
  // why the plan may be bad: what its mapping leaves whole, by name and scope (issue 35)
  const why = whyCard(doc, p, forced?.plan === p.id ? forced.collectives : []);
  if (why) row.append(why);
  const actions = el("span", { class: "geon-plan-actions" });
  const switchTo = button(
    "Switch",
    `Give the document plan "${p.name}"'s applications`,
    () => switchPlan(p),
    "geon-plan-switch",
  );
  const rename = button(
    "Rename",
    `Rename plan "${p.name}"`,
    () => startRename(p, title, actions),
    "geon-plan-rename",
  );
  const remove = button(
    held.confirming === p.id ? "Really delete?" : "Delete",
    `Delete plan "${p.name}" (the document keeps its applications)`,
    () => void removePlan(p, remove),
    "geon-plan-delete",
  );
  // focus moving elsewhere takes the question back
  remove.addEventListener("blur", () => {
    if (held.confirming !== p.id) return;
    remove.textContent = "Delete";
    held.confirming = null;
  });
  actions.append(
    switchTo,
    ...(isMapped(p)
      ? [
          button(
            "Edit",
            `Change plan "${p.name}"'s mesh, axis mapping and inputs`,
            () => startEditing(p),
            "geon-plan-edit",
          ),
        ]
      : []),
    rename,
    remove,
  );
  row.append(actions);
  if (held.renaming?.plan === p.id) startRename(p, title, actions, held.renaming.value);
  return row;
}
