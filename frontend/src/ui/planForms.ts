// The plan forms of the plans section (ui/plans.ts): save how the graph is sharded now as a named
// plan, or write one as a mesh, an axis mapping and where inputs live ("dp=2, tp=4"; "N=dp, F=tp";
// "x: N=dp", model/planTexts.ts), which the same form changes for a plan made that way.

import type { PlansApi } from "../api/plans";
import type { LoomDocument } from "../model/document";
import {
  parseInputs,
  parseMapping,
  parseMesh,
  planFromDocument,
  planTexts,
  type InputLayout,
  type Mesh,
  type Plan,
} from "../model/plans";
import { button, el, submit } from "./dom";

export interface PlanFormsOptions {
  api: PlansApi;
  /** The document the plans section shows now. */
  doc(): LoomDocument | null;
  /** Run one server call; its refusal is shown and the list is left as it was. */
  attempt(work: () => Promise<string>): Promise<boolean>;
  say(error: string, info?: string): void;
  /** Load the list of plans again. */
  reload(): Promise<void>;
}

export interface PlanForms {
  /** The plan name and Save plan. */
  save: HTMLFormElement;
  /** New plan by axis mapping (or the change of one). */
  mapped: HTMLDetailsElement;
  /** Fill the mapping form with a mapped plan, to change it. */
  startEditing(p: Plan): void;
}

export function createPlanForms(options: PlanFormsOptions): PlanForms {
  const { api, attempt, reload, say } = options;
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

  save.addEventListener("submit", (e) => {
    e.preventDefault();
    const doc = options.doc();
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

  return { save, mapped, startEditing };
}
