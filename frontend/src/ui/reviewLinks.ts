// Where reviews lead (issue 35): the nav's unread badge beside the Reviews link
// (templates/base.html), kept live by the websocket's ``notification`` messages; a Compare row's
// edge on the canvas; a review downloaded as Markdown with each thread's permalink.
// A suggested plan sent for review (REVIEW_PLAN_EVENT).

import { reviewMarkdown, type Review } from "../model/reviews";
import { el } from "./dom";

/** Show ``unread`` on the nav's Reviews link (none: no badge). */
export function showUnread(unread: number): void {
  const link = document.querySelector<HTMLElement>("header.site .geon-nav-reviews");
  if (!link) return;
  let badge = link.querySelector<HTMLElement>(".geon-unread");
  if (!unread) return void badge?.remove();
  if (!badge) {
    badge = document.createElement("span");
    badge.className = "badge geon-unread";
    link.append(badge);
  }
  badge.textContent = unread > 99 ? "99+" : String(unread);
  badge.title = `${unread} unread notification${unread === 1 ? "" : "s"}`;
}

/** A Compare row's edge, shown: ``show`` the ends the document holds (a compared plan's edge may
 * run through nodes only its generation makes), else ``flash`` why nothing is shown. */
export function showHeld(
  doc: { nodes: { id: string }[] } | null,
  ids: string[],
  show: (held: string[]) => void,
  flash: (message: string) => void,
): void {
  const held = ids.filter((id) => doc?.nodes.some((n) => n.id === id));
  if (held.length) show(held);
  else
    flash("this edge is between nodes the plan makes when generated; switch to the plan to see it");
}

/** "Export review": download ``review`` (of graph ``graphId``) as Markdown, each thread with its permalink. */
export function downloadReview(review: Review, graphId: string): void {
  const url = `${window.location.origin}/graphs/${graphId}/?review=${review.id}`;
  const text = reviewMarkdown(review, (thread) =>
    thread === null ? url : `${url}&thread=${thread}`,
  );
  const link = el("a", {
    href: URL.createObjectURL(new Blob([text], { type: "text/markdown" })),
    download: `review-${review.id}.md`,
  });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(link.href), 1000);
}

/** The event a suggested plan's "Review" sends (on ``document``, ui/suggestions.ts): the Reviews
 * panel opens its New review form on that saved plan, with that title, for the person to choose
 * the reviewers. An event, as the Plans panel and the Reviews panel know nothing of each other. */
export const REVIEW_PLAN_EVENT = "geon-review-plan";
export interface ReviewPlanRequest {
  plan: number;
  title: string;
}
