// "Comment on selection" in the review shown (issue 18, docs/reviews.md): a thread pinned to the
// selected node, or to the output window the projection window shows, optionally with a suggested
// split of that operation (along one of its index axes, into a number of parts). The note above
// the comment says what the thread would be pinned to, or why nothing can be.

import type { LoomDocument } from "../model/document";
import type { EditOp } from "../model/edits";
import {
  selectionAnchor,
  anchorText,
  type Anchor,
  type Review,
  type ShownWindow,
} from "../model/reviews";
import { indexAxesOf } from "../model/shards";
import type { ReviewsApi } from "../sync/reviewsApi";
import { el, submit } from "./dom";
import { errorText } from "./reviewErrors";

/** What the editor has selected (the panel's options). */
export interface Selection {
  doc(): LoomDocument | null;
  selected(): string[];
  /** The operation and index range the projection window shows, or null when it is closed. */
  window(): ShownWindow | null;
}

export interface CommentForm {
  form: HTMLFormElement;
  /** Say again what a comment would be pinned to (the selection or the window changed). */
  refreshAnchorNote(): void;
}

/** The form for ``current()``, the review shown; ``refetchShown`` fetches it once a thread is added. */
export function createCommentForm(
  options: Selection,
  api: ReviewsApi,
  current: () => Review | null,
  refetchShown: () => Promise<void>,
): CommentForm {
  const anchorNote = el("p", { class: "geon-thread-new-anchor small muted" });
  const threadText = el("textarea", {
    class: "geon-thread-new-text",
    rows: "2",
    placeholder: "Comment (Markdown, @name mentions)",
    "aria-label": "comment on the selection",
  });
  const suggest = el("input", { type: "checkbox", class: "geon-suggest" });
  const suggestAxis = el("select", {
    class: "geon-suggest-axis",
    "aria-label": "suggested split axis",
  });
  const suggestParts = el("input", {
    class: "geon-suggest-parts",
    value: "2",
    size: "3",
    "aria-label": "suggested number of parts",
  });
  const suggestHow = el(
    "span",
    { class: "geon-suggest-how", hidden: "" },
    "along ",
    suggestAxis,
    " into ",
    suggestParts,
    " parts",
  );
  const suggestRow = el(
    "div",
    { class: "geon-suggest-row small" },
    el("label", {}, suggest, " Suggest a split"),
    suggestHow,
  );
  suggest.addEventListener("change", () => (suggestHow.hidden = !suggest.checked));
  const threadError = el("p", { class: "geon-form-error", role: "alert" });
  const threadSend = submit(
    "Comment on selection",
    "Open a thread pinned to the selected node or to the window the projection window shows",
    "primary geon-thread-new-send",
  );
  const threadForm = el(
    "form",
    { class: "geon-thread-new" },
    anchorNote,
    threadText,
    suggestRow,
    threadError,
    threadSend,
  );
  let anchorOp: string | null = null;
  threadForm.addEventListener("submit", (e) => {
    e.preventDefault();
    void addThread();
  });

  /** The anchor "Comment on selection" would use now, and the operation a split suggestion would apply to. */
  function currentAnchor(): Anchor | string {
    return selectionAnchor(options.doc(), options.selected(), options.window());
  }

  function refreshAnchorNote(): void {
    const doc = options.doc();
    const anchor = currentAnchor();
    anchorNote.textContent =
      typeof anchor === "string" ? anchor : `on ${anchorText(anchor, "", doc)}`;
    threadSend.disabled = typeof anchor === "string";
    const op =
      typeof anchor === "string"
        ? null
        : (anchor.region?.operation ??
          (anchor.node && doc?.nodes.find((n) => n.id === anchor.node && "kernel" in (n.body ?? {}))
            ? anchor.node
            : null));
    suggestRow.hidden = op === null;
    if (op !== anchorOp) {
      anchorOp = op;
      suggestAxis.replaceChildren(
        ...(op && doc ? indexAxesOf(doc, op).map((a) => el("option", { value: a, text: a })) : []),
      );
    }
  }

  async function addThread(): Promise<void> {
    const shown = current();
    if (!shown) return;
    const anchor = currentAnchor();
    if (typeof anchor === "string") return void (threadError.textContent = anchor);
    if (!threadText.value.trim()) return void (threadError.textContent = "write a comment first");
    let suggestion: EditOp[] | null = null;
    if (suggest.checked && anchorOp) {
      const parts = Number(suggestParts.value.trim());
      if (!Number.isInteger(parts) || parts < 1)
        return void (threadError.textContent = `parts "${suggestParts.value}" is not a whole number of at least 1`);
      suggestion = [
        { op: "shard", operation: anchorOp, dim: suggestAxis.value, parts } as unknown as EditOp,
      ];
    }
    try {
      await api.addThread(shown.id, anchor, threadText.value, suggestion);
      threadText.value = "";
      suggest.checked = false;
      suggestHow.hidden = true;
      threadError.textContent = "";
      await refetchShown();
    } catch (e) {
      threadError.textContent = errorText(e);
    }
  }

  return { form: threadForm, refreshAnchorNote };
}
