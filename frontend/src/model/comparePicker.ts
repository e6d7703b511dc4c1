// Compare's two pickers (issue 35): the saved plans, then the current document, which is offered
// always — placed, it is costed as placed; unplaced, it runs whole on one device (the server's
// cost says so), so it is a side with a cost, never an empty one.

import type { Plan } from "./plans";

/** The option value of the current document in the pickers. */
export const CURRENT = "current";

/** The pickers' options: each saved plan by name, then the current document (named ``current``)
 * when there is a document, placed or not (last, so the first two saved plans stay the defaults). */
export function compareChoices(
  plans: readonly Plan[],
  hasDocument: boolean,
  current: string,
): { value: string; text: string }[] {
  return [
    ...plans.map((p) => ({ value: String(p.id), text: p.name })),
    ...(hasDocument ? [{ value: CURRENT, text: current }] : []),
  ];
}
