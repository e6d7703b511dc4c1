// A plan's card says why the plan may be bad (issue 35): the operations its mapping leaves whole,
// by name, output and scope, with the server's reason and, for the plan the document is on, what
// that forces under the chosen profile (model/planWhy.ts). At most 20 lines, then a count.

import type { Collective } from "../model/costs";
import { notSplitLines } from "../model/planWhy";
import type { LoomDocument } from "../model/document";
import type { Plan } from "../model/plans";
import { el } from "./dom";

/** The card's "2 operations run whole" section, open if ``open``; null when nothing runs whole. */
export function whyCard(
  doc: LoomDocument | null,
  plan: Plan,
  collectives: readonly Collective[],
  open = false,
): HTMLElement | null {
  const whole = notSplitLines(doc, plan, collectives);
  if (!whole.length) return null;
  return el(
    "details",
    { class: "geon-plan-why small", ...(open ? { open: "" } : {}) },
    el("summary", {
      text: `${whole.length} operation${whole.length === 1 ? "" : "s"} run${whole.length === 1 ? "s" : ""} whole`,
    }),
    el("ul", {}, ...whole.slice(0, 20).map((line) => el("li", { text: line }))),
    ...(whole.length > 20
      ? [el("p", { class: "muted", text: `and ${whole.length - 20} more` })]
      : []),
  );
}
