// The plans section of the shards panel: save how the graph is sharded now as a named plan, or
// write one as a mesh, an axis mapping and where inputs live ("dp=2, tp=4"; "N=dp, F=tp";
// "x: N=dp"; ui/planForms.ts), list the graph's plans (the ones the document matches are marked
// "current"; ui/planRows.ts), switch to one (the server generates it: its Mesh and placed
// Applications as one checked edit, broadcast to every client, which this editor records as one
// undo step), rename or delete one, and compare two side by side with the server's cost of each
// (ui/planCompare.ts). A refusal from the server is shown under the form and changes nothing.

import { PlansApi } from "../api/plans";
import type { Collective } from "../model/costs";
import { followCurrentCost } from "./currentCost";
import { whyCard } from "./planWhyCard";
import { APPLICATION, type LoomDocument } from "../model/document";
import type { LivePlanCost } from "../sync/protocol";
import { CURRENT } from "../model/comparePicker";
import { currentPlans, isMapped, opsToPlan, type Plan, type PlanOp } from "../model/plans";
import { chosenProfile } from "./costs";
import { el } from "./dom";
import { createCompare } from "./planCompare";
import { createPlanForms } from "./planForms";
import { planRow, type RowsHeld } from "./planRows";
import { markReadOnly } from "./readOnly";
import { createSuggestions } from "./suggestions";

export interface PlansOptions {
  graphId: string;
  csrf: string;
  /** A switch to plan ``name`` is about to be generated: the edit id its ``applied`` will carry
   * and the version it is based on, or why it cannot start. */
  beginSwitch(name: string): { editId: string; baseVersion: number } | string;
  /** The server refused the switch: its ``applied`` will never come. */
  cancelSwitch(editId: string): void;
  /** The collectives of the plan the document has now (its name), under the chosen profile,
   * after each change of document, plan list or profile (``null`` and none without such a plan); ``saved``: that saved plan, if it is one. */
  onCollectives?(plan: string | null, collectives: Collective[], saved: Plan | null): void;
  /** Pan the canvas to the edge a collective moves (the tensor and the operation reading it)
   * select both ends and highlight it: a Compare row or a ledger's collective, clicked. */
  showEdge?(tensor: string, consumer: string): void;
  /** Why this user may not change plans (a viewer's or reviewer's role), or null: the rows a load
   * draws are disabled with it at once, not at the editor's next panel update (issue 35). */
  readOnly?(): string | null;
}

export interface PlansSection {
  element: HTMLElement;
  update(doc: LoomDocument | null, version: number | null): void;
  /** Load the list again (after another tab changed it); a failure is shown in the section. */
  reload(): void;
  /** An ``applied``'s collectives of the current plan, to ``onCollectives`` at once (the chosen profile's). */
  livePlanCost(cost: LivePlanCost): void;
}

export function createPlansSection(options: PlansOptions): PlansSection {
  const api = new PlansApi(options.csrf, options.graphId);
  const message = el("p", { class: "geon-form-error geon-plans-error", role: "alert" });
  const note = el("p", { class: "small muted geon-plans-note", role: "status" });
  const { save, mapped, startEditing } = createPlanForms({
    api,
    doc: () => doc,
    attempt: (work) => attempt(work),
    say: (error, info) => say(error, info),
    reload: () => reload(),
  });
  const list = el("ul", { class: "geon-plan-list", "aria-label": "shard plans" });
  const compare = createCompare({
    api,
    state: () => ({ doc, plans }),
    attempt: (work) => attempt(work),
    say: (error, info) => say(error, info),
    showEdge: options.showEdge,
    onProfile: () => currentCost.refresh(),
  });
  const { profile, table, ledgers } = compare;
  const compareForm = compare.form;
  /** The ledger of the plan the document is on, as soon as its cost arrives. */
  const current = el("div", { class: "geon-ledger-current", "aria-live": "polite" });
  // the search's best five, each one click from saved, switched to or compared (issue 33)
  const suggestions = createSuggestions({
    graphId: options.graphId,
    csrf: options.csrf,
    profile: () => profile.value,
    store: async (s, wanted) => {
      const made = await api.create(
        wanted,
        s.plan.mesh,
        {},
        s.plan.axisMapping,
        s.plan.inputs,
        s.plan.pipeline,
      );
      await reload();
      return made;
    },
    switchTo: (p) => (switchPlan(p), note.textContent ?? ""),
    compare: (p) =>
      compare.compare(
        placed() ? CURRENT : String(plans.find((q) => q.id !== p.id)?.id ?? p.id),
        String(p.id),
      ),
  });
  const element = el(
    "section",
    { class: "geon-panel geon-plans", "aria-label": "shard plans" },
    el("h2", { text: "Plans" }),
    save,
    mapped,
    suggestions,
    message,
    note,
    list,
    current,
    compareForm,
    table,
    ledgers,
  );

  let plans: Plan[] = [];
  let doc: LoomDocument | null = null;
  let version: number | null = null;
  let shownKey = "";
  /** Server calls running or waiting their turn (``attempt``). */
  let busy = 0;
  let queue: Promise<unknown> = Promise.resolve();
  /** What a person is in the middle of in the list: a Delete to confirm, a rename (ui/planRows.ts). */
  const held: RowsHeld = { confirming: null, renaming: null };
  /** The plan whose edit was sent and is not in the document yet. */
  let switching: number | null = null;

  let profilesLoaded = false;
  const loadProfiles = async (): Promise<void> => {
    if (profilesLoaded) return;
    profilesLoaded = true;
    const shipped = await api.profiles();
    const chosen = chosenProfile(window.localStorage, shipped.names, shipped.default);
    profile.replaceChildren(
      ...shipped.names.map((n) =>
        el("option", { value: n, text: n, ...(n === chosen ? { selected: "" } : {}) }),
      ),
    );
    currentCost.refresh();
  };

  /** The cost of the plan the document is on: the canvas's edge labels and its ledger. */
  /** The current plan's collectives: its card says what running operations whole forces. */
  let forced: { plan: number; collectives: Collective[] } | null = null;
  const onCollectives = (
    name: string | null,
    collectives: Collective[],
    saved: Plan | null,
  ): void => {
    forced = saved ? { plan: saved.id, collectives } : null;
    const row = saved
      ? [...list.querySelectorAll<HTMLElement>(".geon-plan")].find(
          (r) => r.dataset.plan === saved.name,
        )
      : undefined;
    const was = row?.querySelector<HTMLDetailsElement>(".geon-plan-why");
    const why = saved && was ? whyCard(doc, saved, collectives, was.open) : null;
    if (was && why) was.replaceWith(why);
    options.onCollectives?.(name, collectives, saved);
  };
  const currentCost = followCurrentCost({
    api,
    ledger: current,
    profile,
    onCollectives: options.onCollectives && onCollectives,
    showEdge: options.showEdge,
    state: () => ({ doc, plans, version, busy: busy > 0 }),
  });

  const say = (error: string, info = ""): void => {
    message.textContent = error;
    note.textContent = info;
  };

  /**
   * Run one server call after those already asked for (a click while the panel is updating
   * waits its turn: it is never dropped); its refusal is shown and the list is left as it was.
   */
  const attempt = (work: () => Promise<string>): Promise<boolean> => {
    busy += 1;
    element.dataset.busy = "1";
    const turn = queue.then(async () => {
      try {
        say("", await work());
        return true;
      } catch (e) {
        say((e as Error).message);
        return false;
      } finally {
        busy -= 1;
        if (!busy) delete element.dataset.busy;
      }
    });
    queue = turn;
    return turn;
  };

  const render = (): void => {
    const current = doc ? new Set(currentPlans(doc, plans)) : new Set<number>();
    const done = plans.find((p) => p.id === switching && current.has(p.id));
    if (done) {
      switching = null;
      say("", `The document has plan "${done.name}"'s applications.`);
    }
    shownKey = JSON.stringify([plans, [...current], placed()]);
    // (removing the focused Delete fires its blur, which takes its question back)
    const { confirming } = held;
    redrawKeepingFocus(list, () =>
      list.replaceChildren(
        ...plans.map((p) =>
          planRow(p, current, {
            api,
            doc: () => doc,
            attempt,
            reload,
            forced: () => forced,
            switchPlan,
            startEditing,
            held,
          }),
        ),
      ),
    );
    held.confirming = confirming;
    if (!plans.length)
      list.append(
        el("li", {
          class: "small muted geon-plan-empty",
          text: "No plans yet. Split operations, then save the sharding as a plan.",
        }),
      );
    compare.refresh();
    markReadOnly(list, options.readOnly?.() ?? null);
  };

  const reload = async (): Promise<void> => {
    plans = await api.list();
    render();
    currentCost.refresh();
  };

  /** Switch to ``p`` when the calls before it are done: what it writes is read from the document then. */
  const switchPlan = (p: Plan): void => {
    if (busy) say("", `Switching to plan "${p.name}" once the panel's last request is done…`);
    void attempt(async () => {
      if (!doc) return "";
      const mapped = isMapped(p);
      const ops: PlanOp[] = mapped ? [] : opsToPlan(doc, p);
      if (mapped ? currentPlans(doc, [p]).length > 0 : !ops.length)
        return `The document already has plan "${p.name}"'s applications.`;
      const started = options.beginSwitch(p.name);
      if (typeof started === "string") throw new Error(started);
      switching = p.id;
      say(
        "",
        mapped
          ? `Switching to plan "${p.name}": the server places it by its axis mapping…`
          : `Switching to plan "${p.name}": ${ops.filter((o) => o.op === "shard").length} split, ${ops.filter((o) => o.op === "remove_node").length} applications removed…`,
      );
      try {
        await api.generate(p.id, started.baseVersion, started.editId);
      } catch (e) {
        switching = null;
        options.cancelSwitch(started.editId);
        throw e;
      }
      await reload();
      // the websocket's applied may have come first and said so already
      return switching === p.id
        ? (note.textContent ?? "")
        : `The document has plan "${p.name}"'s applications.`;
    });
  };

  /** Whether the document places anything (an Application): a card's Compare then starts from it;
   * Compare offers it always (issue 35: unplaced, it is costed whole on one device). */
  const placed = (): boolean => !!doc?.nodes.some((n) => n.type === APPLICATION);

  let loaded = false;
  let seenDoc: LoomDocument | null = null;
  let seenPlans: Plan[] | null = null;
  const reloadShown = (): void => void reload().catch((e: Error) => say(e.message));
  return {
    element,
    reload: reloadShown,
    livePlanCost: (cost) => currentCost.live(cost),
    update(next, v) {
      doc = next;
      version = v;
      if (!options.graphId || !doc) {
        element.hidden = true;
        return;
      }
      element.hidden = false;
      if (!loaded) {
        loaded = true;
        reloadShown();
        void loadProfiles().catch((e: Error) => say(e.message));
      }
      // which plans the document matches changes only with the document or the list
      if (doc !== seenDoc || plans !== seenPlans) {
        seenDoc = doc;
        seenPlans = plans;
        if (JSON.stringify([plans, currentPlans(doc, plans), placed()]) !== shownKey) render();
        currentCost.refresh();
      }
      compare.showVersion(version);
    },
  };
}

/** Draw the plans ``list`` again with ``draw``: the control focused in a row keeps the focus in
 * the row drawn in its place (the same plan, the same classes). */
function redrawKeepingFocus(list: HTMLElement, draw: () => void): void {
  const active = document.activeElement;
  const focused = active instanceof HTMLElement && list.contains(active) ? active : null;
  const plan = focused?.closest<HTMLElement>(".geon-plan")?.dataset.plan;
  draw();
  if (!focused || plan === undefined || !focused.classList.length) return;
  const row = [...list.querySelectorAll<HTMLElement>(".geon-plan")].find(
    (r) => r.dataset.plan === plan,
  );
  const selector = [...focused.classList].map((c) => `.${CSS.escape(c)}`).join("");
  row?.querySelector<HTMLElement>(selector)?.focus();
}
