// The verdicts of the review shown (issue 18, docs/reviews.md): each one given, with the stale
// ones marked and why, and approvals of someone the review does not ask noted; and the verdict
// form, which lists each guardrail that refused an approval. The review's author gives no
// verdict: the form stays, disabled, saying why.

import {
  staleText,
  verdictLabel,
  type Review,
  type Verdict,
  type VerdictKind,
} from "../model/reviews";
import { ReviewsError, type ReviewsApi } from "../sync/reviewsApi";
import { el, submit } from "./dom";
import { renderMarkdown } from "./markdown";
import { errorText } from "./reviewErrors";

const VERDICTS: [VerdictKind, string][] = [
  ["approve", "Approve"],
  ["request_changes", "Request changes"],
  ["comment", "Comment"],
];

export function verdictItem(v: Verdict): HTMLElement {
  const item = el(
    "li",
    {
      class: `geon-verdict${v.stale ? " geon-verdict-stale" : ""}`,
      "data-user": v.user ?? "",
      "data-verdict": v.verdict,
    },
    el("span", {
      class: "geon-verdict-who",
      text: `${v.user ?? "someone"} ${verdictLabel(v.verdict)} at version ${v.version}`,
    }),
  );
  if (v.stale)
    item.append(
      el("span", { class: "geon-verdict-mark", text: "stale", title: staleText(v) }),
      el("p", { class: "geon-verdict-why small muted", text: staleText(v) }),
    );
  if (v.requested === false && v.verdict === "approve")
    item.append(
      el("p", {
        class: "geon-verdict-unasked small muted",
        text: "not asked by this review: only an approval of a reviewer it asks approves it",
      }),
    );
  if (v.body) {
    const body = el("div", { class: "geon-verdict-body" });
    body.innerHTML = renderMarkdown(v.body);
    item.append(body);
  }
  return item;
}

export interface VerdictForm {
  form: HTMLFormElement;
  /** Enable the form, or disable it saying why (``refused``: the server's words). */
  refreshVerdictForm(refused: string | null): void;
  /** Forget the last refusal (another review is shown). */
  clear(): void;
}

/** The form for ``current()``, the review shown; ``refetchShown`` fetches it once a verdict is given. */
export function createVerdictForm(
  api: ReviewsApi,
  current: () => Review | null,
  refetchShown: () => Promise<void>,
): VerdictForm {
  const verdictKind = el(
    "select",
    { class: "geon-verdict-kind", "aria-label": "verdict" },
    ...VERDICTS.map(([v, t]) => el("option", { value: v, text: t })),
  );
  const verdictText = el("textarea", {
    class: "geon-verdict-text",
    rows: "2",
    placeholder: "Summary (Markdown)",
    "aria-label": "verdict summary",
  });
  const verdictError = el("p", { class: "geon-form-error geon-verdict-error", role: "alert" });
  const guardrails = el("ul", {
    class: "geon-guardrails",
    "aria-label": "guardrails that refused the approval",
  });
  const verdictSend = submit(
    "Give verdict",
    "Give the verdict at the current version",
    "primary geon-verdict-send",
  );
  // the review's author gives no verdict: the form stays, disabled, saying why (the server's words)
  const verdictRefused = el("p", { class: "geon-verdict-refused small muted", role: "note" });
  const verdictForm = el(
    "form",
    { class: "geon-verdict-form" },
    el("div", { class: "geon-verdict-row" }, verdictKind, verdictSend),
    verdictText,
    verdictRefused,
    verdictError,
    guardrails,
  );
  function refreshVerdictForm(refused: string | null): void {
    for (const control of [verdictKind, verdictText, verdictSend])
      control.disabled = refused !== null;
    verdictSend.title = refused ?? "Give the verdict at the current version";
    verdictRefused.textContent = refused ?? "";
    verdictRefused.hidden = refused === null;
  }
  verdictForm.addEventListener("submit", (e) => {
    e.preventDefault();
    void giveVerdict();
  });

  async function giveVerdict(): Promise<void> {
    const shown = current();
    if (!shown || verdictSend.disabled) return;
    verdictError.textContent = "";
    guardrails.replaceChildren();
    try {
      await api.verdict(shown.id, verdictKind.value as VerdictKind, verdictText.value);
      verdictText.value = "";
      await refetchShown();
    } catch (e) {
      verdictError.textContent = errorText(e);
      if (e instanceof ReviewsError && e.code === "guardrail")
        guardrails.replaceChildren(
          ...e.guardrails.map((g) =>
            el("li", { class: "geon-guardrail", "data-guardrail": g.name, text: g.message }),
          ),
        );
    }
  }

  return {
    form: verdictForm,
    refreshVerdictForm,
    clear() {
      verdictError.textContent = "";
      guardrails.replaceChildren();
    },
  };
}
