// The graph's guardrails on approvals (issue 18, docs/reviews.md "Guardrails"), at the foot of
// the Reviews panel: whether an approval is refused while threads are unresolved, while the graph
// has errors, or while the plan needs more memory than a device of the chosen profile holds. Its
// owner changes them (one PATCH each; a refusal is shown); everyone else reads them.

import type { GuardrailSettings, ReviewsApi } from "../sync/reviewsApi";
import { ApiError } from "../api/client";
import { el } from "./dom";

const SWITCHES: [keyof GuardrailSettings, string][] = [
  ["requireResolvedThreads", "every thread resolved"],
  ["blockOnErrors", "no error issues in the graph"],
  ["blockOverCapacity", "the plan fits each device's memory"],
];

/** The guardrails section; ``owner`` says whether the user may change them. */
export function createGuardrailSettings(api: ReviewsApi, owner: () => boolean): HTMLDetailsElement {
  const fields = el("div", { class: "geon-guardrail-settings small" });
  const error = el("p", { class: "geon-form-error", role: "alert" });
  const element = el(
    "details",
    { class: "geon-guardrails-settings" },
    el("summary", { class: "small muted", text: "Guardrails: an approval needs…" }),
    fields,
    error,
  );

  const render = (settings: GuardrailSettings): void => {
    const mayChange = owner();
    const reason = mayChange ? "" : "Only the graph's owner changes its guardrails";
    const boxes = SWITCHES.map(([key, text]) => {
      const box = el("input", { type: "checkbox", "data-setting": key, title: reason });
      box.checked = settings[key] === true;
      box.disabled = !mayChange;
      box.addEventListener("change", () => void save({ [key]: box.checked }));
      return el("label", { class: "geon-guardrail-setting" }, box, ` ${text}`);
    });
    const profile = el("select", {
      "aria-label": "profile the memory guardrail uses",
      title: reason,
      "data-setting": "profile",
    });
    for (const name of settings.profiles) profile.append(el("option", { value: name, text: name }));
    profile.value = settings.profile;
    profile.disabled = !mayChange;
    profile.addEventListener("change", () => void save({ profile: profile.value }));
    fields.replaceChildren(
      ...boxes,
      el("label", { class: "geon-guardrail-setting" }, "memory of a device of ", profile),
    );
  };

  const save = async (patch: Partial<GuardrailSettings>): Promise<void> => {
    error.textContent = "";
    try {
      render(await api.changeSettings(patch));
    } catch (e) {
      error.textContent = e instanceof ApiError ? e.message : String(e);
      await load();
    }
  };

  const load = async (): Promise<void> => {
    try {
      render(await api.settings());
    } catch (e) {
      error.textContent = e instanceof ApiError ? e.message : String(e);
    }
  };

  element.addEventListener("toggle", () => {
    if (element.open) void load();
  });
  return element;
}
