// The plans section of the shards panel: save how the graph is sharded now as a named plan, or
// write one as a mesh, an axis mapping and where inputs live ("dp=2, tp=4"; "N=dp, F=tp";
// "x: N=dp", model/plans.ts), list
// the graph's plans (the ones the document matches are marked "current"), switch to one (the
// server generates it: its Mesh and placed Applications as one checked edit, broadcast to every
// client, which this editor records as one undo step), rename or delete one, and compare two side
// by side with the server's cost of each. A refusal from the server is shown under the form and
// changes nothing.

import { PlansApi } from "../api/plans";
import type { Collective } from "../model/costs";
import { CURRENT_DOCUMENT, followCurrentCost } from "./currentCost";
import { whyCard } from "./planWhyCard";
import { renderLedger } from "./ledger";
import { renderPlanDiff } from "./planDiff";
import { APPLICATION, type LoomDocument } from "../model/document";
import type { LivePlanCost } from "../sync/protocol";
import { compareChoices, CURRENT } from "../model/comparePicker";
import {
  compareRows,
  currentPlans,
  describePlan,
  isMapped,
  profileAssumptions,
  opsToPlan,
  parseInputs,
  parseMapping,
  parseMesh,
  planFromDocument,
  planTexts,
  type InputLayout,
  type Mesh,
  type Plan,
  type PlanCost,
  type PlanOp,
} from "../model/plans";
import { chosenProfile, rememberProfile } from "./costs";
import { button, el, submit } from "./dom";
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

const CAPTION =
  "Cost on the current document (lower is better, ✓), then how each plan splits each operation";

export function createPlansSection(options: PlansOptions): PlansSection {
  const api = new PlansApi(options.csrf, options.graphId);
  const message = el("p", { class: "geon-form-error geon-plans-error", role: "alert" });
  const note = el("p", { class: "small muted geon-plans-note", role: "status" });
  const name = el("input", {
    class: "geon-plan-name",
    "aria-label": "plan name",
    placeholder: "plan name",
    maxlength: "100",
  });
  const save = el(
    "form",
    { class: "geon-plan-form" },
    name,
    submit(
      "Save plan",
      "Save how the graph is sharded now as a named plan (Enter)",
      "primary geon-plan-save",
    ),
  );
  // a plan by axis mapping: the mesh and which of the graph's axes goes over which mesh axis
  const meshText = el("input", {
    class: "geon-plan-mesh",
    "aria-label": "mesh axes and sizes",
    placeholder: "dp=2, tp=4",
  });
  const mapText = el("input", {
    class: "geon-plan-mapping",
    "aria-label": "axis mapping",
    placeholder: "N=dp, F=tp",
  });
  const inputsText = el("input", {
    class: "geon-plan-inputs",
    "aria-label": "where inputs live",
    placeholder: "x: N=dp; w1: replicated (the default)",
  });
  const NEW_MAPPED = "New plan by axis mapping…";
  const mappedSummary = el("summary", { class: "small", text: NEW_MAPPED });
  const createMapped = submit(
    "Create plan",
    "A plan named as above: every operation with a mapped axis is split over its mesh axis",
    "geon-plan-create",
  );
  const cancelEdit = button(
    "Cancel",
    "Leave the plan as it was",
    () => stopEditing(),
    "geon-plan-edit-cancel",
  );
  cancelEdit.hidden = true;
  const mapped = el(
    "details",
    { class: "geon-plan-by-mapping" },
    mappedSummary,
    el(
      "form",
      { class: "geon-plan-mapping-form" },
      el("label", { class: "small", text: "Mesh " }, meshText),
      el("label", { class: "small", text: "Map " }, mapText),
      el("label", { class: "small", text: "Inputs " }, inputsText),
      el("span", { class: "geon-plan-mapping-actions" }, createMapped, cancelEdit),
    ),
  );
  /** The mapped plan the form is changing, or null when it creates one. */
  let editing: Plan | null = null;
  const startEditing = (p: Plan): void => {
    editing = p;
    const texts = planTexts(p);
    name.value = p.name;
    [meshText.value, mapText.value, inputsText.value] = [texts.mesh, texts.mapping, texts.inputs];
    mappedSummary.textContent = `Change plan "${p.name}"`;
    createMapped.textContent = "Save changes";
    createMapped.title = `Save plan "${p.name}" with this name, mesh, mapping and inputs`;
    cancelEdit.hidden = false;
    mapped.open = true;
    meshText.focus();
  };
  const stopEditing = (): void => {
    editing = null;
    name.value = meshText.value = mapText.value = inputsText.value = "";
    mappedSummary.textContent = NEW_MAPPED;
    createMapped.textContent = "Create plan";
    createMapped.title =
      "A plan named as above: every operation with a mapped axis is split over its mesh axis";
    cancelEdit.hidden = true;
  };
  const list = el("ul", { class: "geon-plan-list", "aria-label": "shard plans" });
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
    compare: (p) => (
      (pickA.value = placed() ? CURRENT : String(plans.find((q) => q.id !== p.id)?.id ?? p.id)),
      (pickB.value = String(p.id)),
      compareForm.requestSubmit()
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
  let compared: { a: number; b: number; version: number } | null = null;
  let busy = false;
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
    state: () => ({ doc, plans, version, busy }),
  });

  const say = (error: string, info = ""): void => {
    message.textContent = error;
    note.textContent = info;
  };

  /** Run one server call; its refusal is shown and the list is left as it was. */
  const attempt = async (work: () => Promise<string>): Promise<boolean> => {
    if (busy) return false;
    busy = true;
    element.dataset.busy = "1";
    try {
      say("", await work());
      return true;
    } catch (e) {
      say((e as Error).message);
      return false;
    } finally {
      busy = false;
      delete element.dataset.busy;
    }
  };

  const render = (): void => {
    const current = doc ? new Set(currentPlans(doc, plans)) : new Set<number>();
    const done = plans.find((p) => p.id === switching && current.has(p.id));
    if (done) {
      switching = null;
      say("", `The document has plan "${done.name}"'s applications.`);
    }
    shownKey = JSON.stringify([plans, [...current], placed()]);
    list.replaceChildren(
      ...plans.map((p) => {
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
          () => startRename(p, row, title, actions),
          "geon-plan-rename",
        );
        const remove = button(
          "Delete",
          `Delete plan "${p.name}" (the document keeps its applications)`,
          () => void removePlan(p, remove),
          "geon-plan-delete",
        );
        remove.addEventListener("blur", () => {
          remove.textContent = "Delete";
          delete remove.dataset.confirm;
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
        return row;
      }),
    );
    if (!plans.length)
      list.append(
        el("li", {
          class: "small muted geon-plan-empty",
          text: "No plans yet. Split operations, then save the sharding as a plan.",
        }),
      );
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
    markReadOnly(list, options.readOnly?.() ?? null);
    const known = (id: number): boolean => (id === 0 ? !!doc : plans.some((p) => p.id === id));
    if (compared && !(known(compared.a) && known(compared.b))) {
      compared = null;
      table.replaceChildren();
    }
  };

  const reload = async (): Promise<void> => {
    plans = await api.list();
    render();
    currentCost.refresh();
  };

  const switchPlan = (p: Plan): void => {
    if (!doc) return;
    let ops: PlanOp[] = [];
    const mapped = isMapped(p);
    try {
      if (!mapped) ops = opsToPlan(doc, p);
    } catch (e) {
      say((e as Error).message);
      return;
    }
    if (mapped ? currentPlans(doc, [p]).length > 0 : !ops.length) {
      say("", `The document already has plan "${p.name}"'s applications.`);
      return;
    }
    if (busy) return;
    const started = options.beginSwitch(p.name);
    if (typeof started === "string") {
      say(started);
      return;
    }
    switching = p.id;
    say(
      "",
      mapped
        ? `Switching to plan "${p.name}": the server places it by its axis mapping…`
        : `Switching to plan "${p.name}": ${ops.filter((o) => o.op === "shard").length} split, ${ops.filter((o) => o.op === "remove_node").length} applications removed…`,
    );
    void attempt(async () => {
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

  const startRename = (
    p: Plan,
    row: HTMLElement,
    title: HTMLElement,
    actions: HTMLElement,
  ): void => {
    const input = el("input", {
      class: "geon-plan-rename-input",
      value: p.name,
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
      form.replaceWith(title);
      actions.hidden = false;
    };
    form.addEventListener("submit", (e) => {
      e.preventDefault();
      const next = input.value.trim();
      if (next === p.name) return cancel();
      void attempt(async () => {
        await api.update(p.id, { name: next });
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
    input.focus();
    input.select();
    void row;
  };

  const removePlan = async (p: Plan, b: HTMLButtonElement): Promise<void> => {
    if (!b.dataset.confirm) {
      b.dataset.confirm = "1";
      b.textContent = "Really delete?";
      return;
    }
    await attempt(async () => {
      await api.remove(p.id);
      await reload();
      return `Deleted plan "${p.name}"; the document keeps its applications.`;
    });
  };

  save.addEventListener("submit", (e) => {
    e.preventDefault();
    if (!doc) return;
    const wanted = name.value.trim();
    if (!wanted) {
      say('the plan needs a name; e.g. "rows"');
      return;
    }
    let plan: ReturnType<typeof planFromDocument>;
    try {
      plan = planFromDocument(doc, wanted);
    } catch (err) {
      say((err as Error).message);
      return;
    }
    void attempt(async () => {
      await api.create(wanted, plan.mesh, plan.spec);
      name.value = "";
      await reload();
      return `Saved plan "${wanted}".`;
    });
  });

  mapped.querySelector("form")!.addEventListener("submit", (e) => {
    e.preventDefault();
    const wanted = name.value.trim();
    if (!wanted) {
      say('the plan needs a name (the field above); e.g. "data parallel"');
      return;
    }
    let mesh: Mesh;
    let axisMapping: Record<string, string>;
    let inputs: Record<string, InputLayout>;
    const changing = editing;
    try {
      mesh = parseMesh(meshText.value, changing?.mesh.name);
      axisMapping = parseMapping(mapText.value, mesh);
      inputs = parseInputs(inputsText.value, mesh);
    } catch (err) {
      say((err as Error).message);
      return;
    }
    void attempt(async () => {
      if (changing) {
        await api.update(changing.id, { name: wanted, mesh, axisMapping, inputs });
        stopEditing();
        await reload();
        return `Saved plan "${wanted}": switch to it to place the document by its new mapping.`;
      }
      await api.create(wanted, mesh, {}, axisMapping, inputs);
      name.value = "";
      await reload();
      return `Created plan "${wanted}": switch to it to see its applications and collectives.`;
    });
  });

  compareForm.addEventListener("submit", (e) => {
    e.preventDefault();
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

  /** Whether the document places anything (an Application): a card's Compare then starts from it;
   * Compare offers it always (issue 35: unplaced, it is costed whole on one device). */
  const placed = (): boolean => !!doc?.nodes.some((n) => n.type === APPLICATION);
  /** The current document as Compare's side: id 0, its splits read back from its Applications. */
  const documentPlan = (): Plan => {
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
    currentCost.refresh();
    if (compared) compareForm.requestSubmit();
  });

  /** Under the table, each compared plan's ledger (ui/ledger.ts). */
  const showLedgers = (costs: [Plan, PlanCost][]): void => {
    ledgers.replaceChildren(
      ...costs.map(([plan, cost]) => renderLedger(plan.name, cost, false, options.showEdge)),
    );
  };

  const showTable = (a: Plan, ca: PlanCost, b: Plan, cb: PlanCost): void => {
    const rows = compareRows(doc, { plan: a, cost: ca }, { plan: b, cost: cb });
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
