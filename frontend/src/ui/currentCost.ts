/**
 * The cost of the plan the document is on (issue 16 item 7): its collectives label the canvas's
 * edges, and its ledger shows in the Plans panel. The labels come with the ``applied`` of an edit
 * when the server carried them (``planCost``: drawn in the next animation frame, with no request),
 * else from the plan's REST cost, asked once per version; the ledger always comes from the REST
 * cost. One request is out at a time, and an answer for an older version is dropped.
 */

import type { PlansApi } from "../api/plans";
import type { Collective } from "../model/costs";
import { APPLICATION, type LoomDocument } from "../model/document";
import { currentPlans, type Plan } from "../model/plans";
import type { LivePlanCost } from "../sync/protocol";
import { el } from "./dom";
import { renderLedger } from "./ledger";

export interface CurrentCostOptions {
  api: PlansApi;
  /** Where the current plan's ledger goes. */
  ledger: HTMLElement;
  /** The chosen hardware profile (its value is the name; empty until the names are loaded). */
  profile: HTMLSelectElement;
  /** The labels' consumer: the plan's name and its collectives, or null and none; ``saved``: the
   * saved plan they are of (null for the current document's own cost), whose ``notSplit`` says
   * what it runs whole (issue 35: the Issues panel's information entries). */
  onCollectives?(plan: string | null, collectives: Collective[], saved: Plan | null): void;
  /** A collective's row, clicked: pan the canvas to its edge and highlight it. */
  showEdge?(tensor: string, consumer: string): void;
  /** The Plans panel's state now: a ``busy`` panel is saving, switching or deleting a plan. */
  state(): { doc: LoomDocument | null; plans: Plan[]; version: number | null; busy: boolean };
}

export interface CurrentCost {
  /** The document, the plan list or the profile may have changed: ask again if so. */
  refresh(): void;
  /** An ``applied`` carried the current plan's collectives: label the edges now. */
  live(cost: LivePlanCost): void;
}

/** What the ledger and labels are named by when no saved plan is the document's. */
export const CURRENT_DOCUMENT = "current document";

/** Whether the document places anything (an Application): then it has a cost of its own. */
function placed(doc: LoomDocument): boolean {
  return doc.nodes.some((n) => n.type === APPLICATION);
}

export function followCurrentCost(options: CurrentCostOptions): CurrentCost {
  const { api, ledger, profile } = options;
  /** What was last asked: plan, version and profile ("" when there is no current plan; null:
   * nothing, so the next refresh asks whatever is current, even for no plan). */
  let asked: string | null = null;
  /** The plan an ``applied`` said was current last, at its version, and the key (as ``asked``)
   * of the labels it carried. */
  let pushed: { planId: number; version: number; key: string } | null = null;
  let timer: number | undefined;
  let costing = false;
  let again = false;

  const refresh = (): void => {
    const { doc, plans, version } = options.state();
    if (!options.onCollectives || !doc) return;
    const ids = new Set(currentPlans(doc, plans));
    // at the version an applied named the current plan, its word holds while the plan list
    // (reloaded after a switch) still has the plan as it was before
    const told = pushed?.version === version ? pushed : null;
    const saved =
      plans.find((p) => ids.has(p.id)) ?? plans.find((p) => p.id === told?.planId) ?? null;
    // no saved plan is the document's, but it is placed: the current document's own cost
    const plan = saved ?? (placed(doc) ? { id: 0, name: CURRENT_DOCUMENT } : null);
    const key = plan ? `${plan.id}:${version}:${profile.value}` : "";
    if (key === asked || (!saved && told)) return;
    asked = key;
    window.clearTimeout(timer);
    if (!plan) {
      options.onCollectives(null, [], null);
      ledger.replaceChildren();
      return;
    }
    timer = window.setTimeout(() => {
      if (options.state().busy || costing) {
        // a save, switch, rename or delete, or a cost, is under way: ask again after it
        asked = null;
        if (costing) again = true;
        else timer = window.setTimeout(refresh, 300);
        return;
      }
      if ((plan.id && !options.state().plans.some((p) => p.id === plan.id)) || key !== asked)
        return;
      costing = true;
      const wait = (message: string): void => {
        // a worker computes it: say so in the ledger's place until it answers
        if (key === asked)
          ledger.replaceChildren(
            el("p", {
              class: "small muted geon-ledger-pending",
              role: "status",
              text: `Costing ${plan.id ? `plan "${plan.name}"` : "the current document"}: ${message}`,
            }),
          );
      };
      const asking = plan.id
        ? api.cost(plan.id, profile.value || undefined, wait)
        : api.documentCost(profile.value || undefined, wait);
      asking
        .then(
          (cost) => {
            if (key !== asked) return;
            options.onCollectives?.(plan.name, cost.collectives ?? [], saved);
            const open = ledger.querySelector("details")?.open ?? false;
            ledger.replaceChildren(renderLedger(plan.name, cost, open, options.showEdge));
          },
          (error: Error) => {
            // a refused cost (the plan no longer fits) draws no collectives, unless an applied
            // carried this very key's (the server's word), and says why in the ledger's place
            if (key !== asked) return;
            if (key !== pushed?.key) options.onCollectives?.(plan.name, [], saved);
            ledger.replaceChildren(
              el("p", {
                class: "small geon-form-error geon-ledger-refused",
                role: "status",
                text: `No cost for ${plan.id ? `plan "${plan.name}"` : "the current document"}: ${error.message}`,
              }),
            );
          },
        )
        .finally(() => {
          costing = false;
          if (again) {
            again = false;
            refresh();
          }
        });
    }, 0);
  };

  const live = (cost: LivePlanCost): void => {
    const plan = options.state().plans.find((p) => p.id === cost.planId);
    const collectives = cost.error !== undefined ? [] : cost.collectives?.[profile.value];
    // a plan not listed yet, or the profiles not loaded yet: the REST cost labels the edges
    if (!options.onCollectives || !plan || !collectives) return;
    asked = null; // a cost still out for an older version is not drawn over these
    pushed = {
      planId: plan.id,
      version: cost.version,
      key: `${plan.id}:${cost.version}:${profile.value}`,
    };
    options.onCollectives(plan.name, collectives, plan);
  };

  return { refresh, live };
}
