// How a review is introduced in the Reviews panel (issue 18, docs/reviews.md): its state chip and
// byline (plan, author, reviewers asked) in the list, and the head of the review shown: the way
// back to the list, its title, description and what changed since your verdict, "Export review",
// and for editors and owners "Ask again" per reviewer and Close / Reopen.

import {
  canEditReviews,
  sinceVerdictText,
  stateText,
  type Review,
  type ReviewSummary,
  type Role,
} from "../model/reviews";
import type { ReviewsApi } from "../sync/reviewsApi";
import { button, el } from "./dom";
import { renderMarkdown } from "./markdown";
import { downloadReview } from "./reviewLinks";

export function stateChip(r: ReviewSummary): HTMLElement {
  return el("span", {
    class: `geon-review-state state-${r.state}`,
    "data-state": r.state,
    text: stateText(r),
  });
}

export function meta(r: ReviewSummary): string {
  const asks = r.reviewers.length ? `asks ${r.reviewers.join(", ")}` : "no reviewers";
  return `${r.plan ? r.plan.name : "whole graph"} · by ${r.author ?? "someone"} · ${asks}`;
}

export interface ReviewHeadContext {
  role: Role | null;
  graphId: string;
  api: ReviewsApi;
  /** Make a call, then fetch the review shown again (a refusal shows in the panel). */
  write(call: () => Promise<unknown>): Promise<void>;
  /** Back to the list of reviews. */
  toList(): void;
}

/** The head of the review shown, down to its Close / Reopen. */
export function reviewHead(
  r: Review,
  { role, graphId, api, write, toList }: ReviewHeadContext,
): HTMLElement[] {
  const back = button(
    "‹ All reviews",
    "Back to the list of reviews",
    toList,
    "geon-small geon-review-back",
  );
  const head = el(
    "div",
    { class: "geon-review-head" },
    el("h3", { class: "geon-review-title-text", text: r.title }),
    stateChip(r),
  );
  const parts: HTMLElement[] = [
    back,
    head,
    el("p", {
      class: "geon-review-meta small muted",
      text: `${meta(r)} · from version ${r.version} (now ${r.currentVersion})`,
    }),
  ];
  if (r.description) {
    const d = el("div", { class: "geon-review-description-text" });
    d.innerHTML = renderMarkdown(r.description);
    parts.push(d);
  }
  if (r.sinceYourVerdict) {
    const since = el("p", {
      class: "geon-review-since small",
      role: "note",
      text: sinceVerdictText(r.sinceYourVerdict),
    });
    if (r.sinceYourVerdict.page)
      since.append(
        " ",
        el("a", {
          href: r.sinceYourVerdict.page,
          target: "_blank",
          text: "Open the version diff",
        }),
      );
    parts.push(since);
  }
  parts.push(
    button(
      "Export review",
      "Download the review, its threads and verdicts as Markdown",
      () => downloadReview(r, graphId),
      "geon-small geon-review-export",
    ),
  );
  if (canEditReviews(role) && r.state !== "closed" && r.reviewers.length) {
    const again = el("div", { class: "geon-review-requests small" }, "Ask again: ");
    for (const name of r.reviewers)
      again.append(
        button(
          name,
          `Ask ${name} to review again (they are notified, and see the changes since their last verdict)`,
          () => void write(() => api.requestAgain(r.id, [name])),
          "geon-small geon-review-request",
        ),
      );
    parts.push(again);
  }
  if (canEditReviews(role)) {
    const closed = r.state === "closed";
    parts.push(
      button(
        closed ? "Reopen review" : "Close review",
        closed ? "Open the review again" : "Close the review (no more verdicts are asked)",
        () => void write(() => api.setState(r.id, closed ? "open" : "closed")),
        "geon-small geon-review-close",
      ),
    );
  }
  return parts;
}
