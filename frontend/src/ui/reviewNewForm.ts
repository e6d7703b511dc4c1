// The New review form of the Reviews panel (issue 18, docs/reviews.md), for editors and owners: a
// title, the plan under review or the whole graph, reviewers from the graph's members, a
// description. A suggested plan's "Review" opens it with the plan chosen (ui/reviewLinks.ts).

import type { PlansApi } from "../api/plans";
import type { ReviewSummary } from "../model/reviews";
import type { ReviewsApi } from "../sync/reviewsApi";
import { button, el, submit } from "./dom";
import { errorText } from "./reviewErrors";
import type { ReviewPlanRequest } from "./reviewLinks";

export interface NewReviewForm {
  form: HTMLFormElement;
  /** Show the form, its plans and reviewers fetched; ``preset``: a plan and a title to start from. */
  openForm(preset?: ReviewPlanRequest): Promise<void>;
}

/** The form; ``opened`` lists and shows the review it opened. */
export function createNewReviewForm(
  api: ReviewsApi,
  plansApi: PlansApi,
  opened: (review: ReviewSummary) => Promise<void>,
): NewReviewForm {
  const title = el("input", {
    class: "geon-review-title",
    "aria-label": "review title",
    placeholder: "title",
    maxlength: "200",
    required: "",
  });
  const plan = el("select", { class: "geon-review-plan", "aria-label": "plan under review" });
  const people = el(
    "fieldset",
    { class: "geon-review-reviewers" },
    el("legend", { class: "small muted", text: "Reviewers" }),
  );
  const description = el("textarea", {
    class: "geon-review-description",
    rows: "2",
    placeholder: "what to look at (Markdown)",
    "aria-label": "review description",
  });
  const formError = el("p", { class: "geon-form-error", role: "alert" });
  const form = el(
    "form",
    { class: "geon-review-new", hidden: "" },
    title,
    el("label", { class: "small muted", text: "Plan " }, plan),
    people,
    description,
    formError,
    el(
      "div",
      { class: "geon-review-form-actions" },
      submit("Open review", "Open the review and tell the reviewers", "primary geon-review-open"),
      button("Cancel", "Close the form", () => (form.hidden = true), "geon-small"),
    ),
  );
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    void openReview();
  });

  /** Open the New review form; ``preset``: a plan to review and a title (a suggested plan's "Review"). */
  async function openForm(preset?: ReviewPlanRequest): Promise<void> {
    form.hidden = false;
    formError.textContent = "";
    if (preset) title.value = preset.title;
    title.focus();
    try {
      const [plans, names] = await Promise.all([plansApi.list(), api.reviewers()]);
      plan.replaceChildren(
        el("option", { value: "", text: "the whole graph" }),
        ...plans.map((p) => el("option", { value: String(p.id), text: p.name })),
      );
      if (plans.length)
        plan.value = String(plans.find((p) => p.id === preset?.plan)?.id ?? plans[0]!.id);
      people.replaceChildren(
        el("legend", { class: "small muted", text: "Reviewers" }),
        ...names.map((n) =>
          el(
            "label",
            { class: "geon-review-reviewer small", "data-user": n },
            el("input", { type: "checkbox", value: n }),
            ` ${n}`,
          ),
        ),
      );
    } catch (e) {
      formError.textContent = errorText(e);
    }
  }

  async function openReview(): Promise<void> {
    const reviewers = [...people.querySelectorAll<HTMLInputElement>("input:checked")].map(
      (i) => i.value,
    );
    try {
      const review = await api.open({
        title: title.value.trim(),
        description: description.value,
        plan: plan.value ? Number(plan.value) : null,
        reviewers,
      });
      form.hidden = true;
      title.value = description.value = "";
      await opened(review);
    } catch (e) {
      formError.textContent = errorText(e);
    }
  }

  return { form, openForm };
}
