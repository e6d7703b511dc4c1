// Compare in the plans section (ui/plans.ts): two plans picked side by side (either may be the
// current document), timed on the chosen hardware profile: the server's cost of each as a table
// (model/compareRows.ts), the plan diff and each plan's ledger under it. The table says when the
// graph has changed since it was computed.

import type { PlansApi } from "../api/plans";
import { compareChoices, CURRENT } from "../model/comparePicker";
import type { LoomDocument } from "../model/document";
import {
  compareRows,
  planFromDocument,
  profileAssumptions,
  type Mesh,
  type Plan,
  type PlanCost,
} from "../model/plans";
import { rememberProfile } from "./costs";
import { CURRENT_DOCUMENT } from "./currentCost";
import { button, el, submit } from "./dom";
import { renderLedger } from "./ledger";
import { renderPlanDiff } from "./planDiff";

export interface CompareOptions {
  api: PlansApi;
  /** The plans section's state now: its document and its list of plans. */
  state(): { doc: LoomDocument | null; plans: Plan[] };
  /** Run one server call; its refusal is shown and the list is left as it was. */
  attempt(work: () => Promise<string>): Promise<boolean>;
  say(error: string, info?: string): void;
  /** A row of the plan diff or a ledger's collective, clicked: its edge on the canvas. */
  showEdge?(tensor: string, consumer: string): void;
  /** The chosen profile changed (after it is remembered). */
  onProfile(): void;
}

export interface CompareSection {
  /** The pickers, the profile and the Compare button. */
  form: HTMLFormElement;
  /** The chosen hardware profile (its value is the name; empty until the names are loaded). */
  profile: HTMLSelectElement;
  table: HTMLElement;
  ledgers: HTMLElement;
  /** The list or the document changed: the pickers offer what there is now. */
  refresh(): void;
  /** Compare plan ``a`` with plan ``b`` (picker values: a plan's id, or CURRENT). */
  compare(a: string, b: string): void;
  /** The graph is at ``version``: a table computed at another is marked stale. */
  showVersion(version: number | null): void;
}

const CAPTION =
  "Cost on the current document (lower is better, ✓), then how each plan splits each operation";

export function createCompare(options: CompareOptions): CompareSection {
  const { api, attempt, say } = options;
  const pickA = el("select", { class: "geon-compare-a", "aria-label": "first plan to compare" });
  const pickB = el("select", { class: "geon-compare-b", "aria-label": "second plan to compare" });
  const profile = el("select", {
    class: "geon-profile",
    "aria-label": "hardware profile",
    title: "The hardware the plans are timed on (remembered in this browser)",
  });
  const compareForm = el(
    "form",
    { class: "geon-compare-form" },
    pickA,
    el("span", { class: "small muted", text: "vs" }),
    pickB,
    el("label", { class: "small muted geon-profile-label", text: "on" }, profile),
    submit("Compare", "Compare the two plans' costs side by side", "geon-compare-go"),
  );
  const table = el("div", { class: "geon-compare", "aria-live": "polite" });
  table.addEventListener(
    "keydown",
    (e) =>
      e.key === "Escape" &&
      table.classList.contains("geon-compare-wide") &&
      table.querySelector<HTMLButtonElement>(".geon-compare-widen")?.click(),
  );
  const ledgers = el("div", { class: "geon-ledgers", "aria-live": "polite" });
  let compared: { a: number; b: number; version: number } | null = null;

  compareForm.addEventListener("submit", (e) => {
    e.preventDefault();
    const { plans } = options.state();
    const a =
      pickA.value === CURRENT ? documentPlan() : plans.find((p) => String(p.id) === pickA.value);
    const b =
      pickB.value === CURRENT ? documentPlan() : plans.find((p) => String(p.id) === pickB.value);
    if (!a || !b) return;
    if (a.id === b.id) {
      say(
        a.id === 0
          ? "pick a plan to compare with the current document"
          : "pick two different plans to compare",
      );
      return;
    }
    void attempt(async () => {
      const on = profile.value || undefined;
      const wait = (message: string): void => say("", message);
      const costOf = (p: Plan): Promise<PlanCost> =>
        p.id === 0 ? api.documentCost(on, wait) : api.cost(p.id, on, wait);
      const compare =
        a.id === 0
          ? api.documentDiff(b.id, "before", on, wait)
          : b.id === 0
            ? api.documentDiff(a.id, "after", on, wait)
            : api.diff(a.id, b.id, on, wait);
      const [ca, cb, diff] = await Promise.all([costOf(a), costOf(b), compare]);
      showTable(a, ca, b, cb);
      showLedgers([
        [a, ca],
        [b, cb],
      ]);
      ledgers.prepend(renderPlanDiff(diff, options.showEdge));
      compared = { a: a.id, b: b.id, version: ca.version };
      return "";
    });
  });

  /** The current document as Compare's side: id 0, its splits read back from its Applications. */
  const documentPlan = (): Plan => {
    const { doc } = options.state();
    let spec: Plan["spec"] = {};
    let mesh: Mesh = { name: CURRENT_DOCUMENT, axes: {} };
    try {
      if (doc) ({ spec, mesh } = planFromDocument(doc, CURRENT_DOCUMENT));
    } catch {
      // a placement no spec entry can say (uneven pieces): the costs still compare
    }
    return { id: 0, name: CURRENT_DOCUMENT, mesh, spec };
  };

  profile.addEventListener("change", () => {
    rememberProfile(window.localStorage, profile.value);
    options.onProfile();
    if (compared) compareForm.requestSubmit();
  });

  /** Under the table, each compared plan's ledger (ui/ledger.ts). */
  const showLedgers = (costs: [Plan, PlanCost][]): void => {
    ledgers.replaceChildren(
      ...costs.map(([plan, cost]) => renderLedger(plan.name, cost, false, options.showEdge)),
    );
  };

  const showTable = (a: Plan, ca: PlanCost, b: Plan, cb: PlanCost): void => {
    const rows = compareRows(options.state().doc, { plan: a, cost: ca }, { plan: b, cost: cb });
    const cell = (text: string, mark: boolean, cls: string) =>
      el(
        "td",
        { class: `${cls}${mark ? " better" : ""}`, ...(mark ? { title: "better (lower)" } : {}) },
        text,
        ...(mark
          ? [el("span", { class: "geon-better-mark", "aria-label": "better", text: " ✓" })]
          : []),
      );
    const head = el(
      "tr",
      {},
      el("th", { scope: "col", text: `at version ${ca.version}` }),
      el("th", { scope: "col", class: "plan-a", text: a.name }),
      el("th", { scope: "col", class: "plan-b", text: b.name }),
    );
    const body = rows.map((r, i) => {
      const tr = el(
        "tr",
        {
          class: `geon-compare-row ${r.kind}${r.differs ? " differs" : ""}`,
          "data-label": r.label,
        },
        el("th", { scope: "row", text: r.label }),
        cell(r.a, r.better === "a", "plan-a"),
        cell(r.b, r.better === "b", "plan-b"),
      );
      if (r.kind === "operation" && rows[i - 1]?.kind === "cost")
        tr.classList.add("first-operation");
      return tr;
    });
    // wide: a decision table over the canvas (issue 35), with what the profile assumes beside the times
    const widen = button(
      "Wide view",
      "Show the comparison wide, as a decision table (again, or Escape, to close)",
      () =>
        (widen.textContent = table.classList.toggle("geon-compare-wide")
          ? "Close wide view"
          : "Wide view"),
      "geon-small geon-compare-widen",
    );
    const assumes = ca.profile ? profileAssumptions(ca.profile) : "";
    table.replaceChildren(
      widen,
      el(
        "table",
        { class: "geon-compare-table" },
        el("caption", { class: "small muted", text: CAPTION }),
        el("thead", {}, head),
        el("tbody", {}, ...body),
      ),
      ...(assumes ? [el("p", { class: "small muted geon-compare-assumes", text: assumes })] : []),
    );
    table.dataset.version = String(ca.version);
  };

  return {
    form: compareForm,
    profile,
    table,
    ledgers,
    refresh() {
      const { doc, plans } = options.state();
      for (const [pick, at] of [
        [pickA, 0],
        [pickB, 1],
      ] as const) {
        const was = pick.value;
        const options = compareChoices(plans, !!doc, CURRENT_DOCUMENT).map((o) => el("option", o));
        pick.replaceChildren(...options);
        if (options.some((o) => o.value === was)) pick.value = was;
        else if (options[at]) pick.value = options[at]!.value;
      }
      // a side kept from a list of one (the document not yet placed) is not compared with itself
      if (pickA.value === pickB.value)
        pickB.value = [...pickB.options].find((o) => o.value !== pickA.value)?.value ?? pickB.value;
      compareForm.hidden = compareChoices(plans, !!doc, CURRENT_DOCUMENT).length < 2;
      const known = (id: number): boolean => (id === 0 ? !!doc : plans.some((p) => p.id === id));
      if (compared && !(known(compared.a) && known(compared.b))) {
        compared = null;
        table.replaceChildren();
      }
    },
    compare(a, b) {
      pickA.value = a;
      pickB.value = b;
      compareForm.requestSubmit();
    },
    showVersion(version) {
      const caption = table.querySelector("caption");
      if (compared && version !== null && version !== compared.version) {
        table.dataset.stale = "1";
        if (caption)
          caption.textContent = `Computed at version ${compared.version}; the graph is now at version ${version}: compare again for the current costs.`;
      } else {
        delete table.dataset.stale;
        if (caption) caption.textContent = CAPTION;
      }
    },
  };
}
