// "Suggest plans" in the Plans panel (issue 33): the server searches plans on a mesh the person
// types ("dp=2, tp=4"; a pp axis makes them pipelines) and answers the best five
// (GET /graphs/<id>/plans/suggestions, geon/graphs/search_api.py), each with its step time, the
// memory its fullest device holds, whether that fits the profile, and why it costs what it
// does. Each is one click from being saved, switched to (saved, then switched), compared with
// the document (saved, then compared) or sent for review (saved, then the Reviews panel's New
// review form opens on it: ``REVIEW_PLAN_EVENT``); a pipelined one draws its schedule chart
// (ui/schedule.ts). A refusal from the server is said in the section and nothing changes.

import { answerAs, RestClient } from "../api/client";
import type { PlanPipeline } from "../model/pipelines";
import type { InputLayout, Mesh, Plan } from "../model/plans";
import { button, el, submit } from "./dom";
import { REVIEW_PLAN_EVENT, type ReviewPlanRequest } from "./reviewLinks";
import { renderSchedule, seconds, type PipelineCost } from "./schedule";
import "./schedule.css";

export interface SuggestedPlan {
  name: string;
  axisMapping: Record<string, string>;
  seconds: number;
  fits: boolean;
  why: string;
  peakBytes: number;
  plan: {
    name: string;
    mesh: Mesh;
    axisMapping: Record<string, string>;
    inputs: Record<string, InputLayout>;
    pipeline?: PlanPipeline;
  };
  pipeline?: PipelineCost;
}

export interface Suggestions {
  best: SuggestedPlan | null;
  candidates: SuggestedPlan[];
  searched: number;
  complete: boolean;
  profile: string;
}

class SuggestApi extends RestClient {
  suggest(graphId: string, mesh: string, profile: string | undefined): Promise<Suggestions> {
    return answerAs<Suggestions>()(
      this.api.GET("/api/v1/graphs/{graph_id}/plans/suggestions", {
        params: { path: { graph_id: graphId }, query: { mesh, profile } },
      }),
    );
  }
}

export interface SuggestOptions {
  graphId: string;
  csrf: string;
  /** The profile chosen in the Plans panel ("" for the server's default). */
  profile(): string;
  /** Store the suggestion as a plan named ``name`` (the list reloaded); throws the refusal. */
  store(s: SuggestedPlan, name: string): Promise<Plan>;
  /** Switch the document to a saved plan; what the panel says about it. */
  switchTo(p: Plan): string;
  /** Compare a saved plan with the document (or another plan). */
  compare(p: Plan): void;
}

/** Bytes as people read them: "4.9 kB", "12.0 GB". */
export function bytes(n: number): string {
  const units = ["B", "kB", "MB", "GB", "TB"];
  let at = 0;
  while (n >= 1000 && at < units.length - 1) {
    n /= 1000;
    at++;
  }
  return at ? `${n.toFixed(1)} ${units[at]}` : `${n} B`;
}

/** A saved plan's name for a suggestion: its mapping, short. */
export function suggestionName(s: SuggestedPlan): string {
  return `suggested: ${s.name}`.slice(0, 100);
}

export function createSuggestions(options: SuggestOptions): HTMLElement {
  const api = new SuggestApi(options.csrf);
  const mesh = el("input", {
    class: "geon-suggest-mesh",
    "aria-label": "mesh to search on",
    placeholder: "dp=2, tp=4",
    value: "dp=2, tp=4",
  });
  const status = el("p", { class: "small muted geon-suggest-status", role: "status" });
  const error = el("p", { class: "geon-form-error geon-suggest-error", role: "alert" });
  const list = el("ol", { class: "geon-suggest-list", "aria-label": "suggested plans" });
  const chart = el("div", { class: "geon-suggest-chart", "aria-live": "polite" });
  const form = el(
    "form",
    { class: "geon-suggest-form" },
    el("label", { class: "small", text: "Mesh " }, mesh),
    submit("Suggest plans", "Search plans on this mesh and show the best five", "geon-suggest-go"),
  );
  const section = el(
    "details",
    { class: "geon-suggest" },
    el("summary", { class: "small", text: "Suggest plans…" }),
    form,
    error,
    status,
    list,
    chart,
  );
  let busy = false;
  /** The chart at the width the panel gives it. */
  const draw = (p: PipelineCost): void =>
    chart.replaceChildren(renderSchedule(p, Math.max(260, chart.clientWidth || 320)));

  const act = async (work: () => Promise<string>): Promise<void> => {
    if (busy) return;
    busy = true;
    try {
      error.textContent = "";
      status.textContent = await work();
    } catch (e) {
      error.textContent = (e as Error).message;
    } finally {
      busy = false;
    }
  };

  const row = (s: SuggestedPlan, rank: number): HTMLElement => {
    const name = suggestionName(s);
    const why = s.fits ? s.why : `does not fit: ${s.why}`;
    const item = el(
      "li",
      {
        class: `geon-suggestion${s.fits ? "" : " geon-suggestion-over"}`,
        "data-rank": String(rank),
      },
      el("span", { class: "geon-suggestion-name", text: s.name }),
      el("span", {
        class: "geon-suggestion-time",
        text: seconds(s.seconds),
        title: "step time (no overlap)",
      }),
      el("span", {
        class: "geon-suggestion-memory small muted",
        text: bytes(s.peakBytes),
        title: "the fullest device's peak memory",
      }),
      el("span", { class: "geon-suggestion-why small", text: why }),
    );
    const actions = el("span", { class: "geon-suggestion-actions" });
    const save = button(
      "Save",
      `Save as plan "${name}"`,
      () => void act(async () => `Saved plan "${(await options.store(s, name)).name}".`),
      "geon-small geon-suggestion-save",
    );
    const switchTo = button(
      "Switch",
      `Save as plan "${name}" and switch the document to it`,
      () => void act(async () => options.switchTo(await options.store(s, name))),
      "geon-small geon-suggestion-switch",
    );
    const compare = button(
      "Compare",
      `Save as plan "${name}" and compare it with the document`,
      () =>
        void act(async () => {
          const made = await options.store(s, name);
          options.compare(made);
          return `Saved plan "${made.name}"; comparing it below.`;
        }),
      "geon-small geon-suggestion-compare",
    );
    const review = button(
      "Review",
      `Save as plan "${name}" and ask reviewers to review it (the Reviews panel's form opens on it)`,
      () =>
        void act(async () => {
          const made = await options.store(s, name);
          const detail: ReviewPlanRequest = {
            plan: made.id,
            title: `Review plan "${made.name}"`.slice(0, 200),
          };
          section.dispatchEvent(new CustomEvent(REVIEW_PLAN_EVENT, { bubbles: true, detail }));
          return `Saved plan "${made.name}"; choose its reviewers in the Reviews panel.`;
        }),
      "geon-small geon-suggestion-review",
    );
    actions.append(save, switchTo, compare, review);
    if (s.pipeline) {
      const pipeline = s.pipeline;
      actions.append(
        button(
          "Schedule",
          "Draw this plan's pipeline schedule",
          () => draw(pipeline),
          "geon-small geon-suggestion-schedule",
        ),
      );
    }
    item.append(actions);
    return item;
  };

  form.addEventListener("submit", (e) => {
    e.preventDefault();
    const text = mesh.value.replace(/\s+/g, "");
    void act(async () => {
      list.replaceChildren();
      chart.replaceChildren();
      status.textContent = `Searching plans on ${text}…`;
      const found = await api.suggest(options.graphId, text, options.profile() || undefined);
      list.replaceChildren(...found.candidates.map(row));
      const first = found.candidates[0]?.pipeline;
      if (first) draw(first);
      const how = found.complete
        ? `all ${found.searched} searched`
        : `${found.searched} searched before the time ran out`;
      if (!found.best)
        return `No plan fits ${found.profile}'s memory (${how}); the closest are listed.`;
      return `The best ${found.candidates.length} on ${text} under ${found.profile} (${how}).`;
    });
  });
  return section;
}
