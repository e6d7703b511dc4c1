// The Reviews panel of the editor (issue 18, docs/reviews.md): the graph's reviews ("2 open
// reviews", an unread badge that live events raise), a form to open one (editors and owners: a
// title, the plan under review or the whole graph, reviewers from the graph's members, a
// description: ui/reviewNewForm.ts), and the review shown (its head: ui/reviewHeader.ts): its
// threads (ui/reviewThread.ts), "Comment on selection" (ui/reviewCommentForm.ts: a thread
// pinned to the selected node, or to the output window the projection window shows, optionally
// with a suggested split), its verdicts with the stale ones marked and why, and the verdict
// form, which lists each guardrail that refused an approval (ui/reviewVerdicts.ts). Roles decide
// what shows: viewers read; reviewers comment and give verdicts (never on a review they opened:
// the form is disabled, saying why), and resolve threads (their own, or any of a review that
// asks them; the graph's owner any); editors and owners also open, close and reopen reviews and
// apply suggestions (the server checks every role again).
//
// Live: the websocket's ``review`` messages (``event``) refresh the list and the review shown;
// after each new version the panel fetches them again (debounced), so approvals that went stale
// show without a reload.

import "./reviews.css";
import { PlansApi } from "../api/plans";
import { nodeName, type LoomDocument } from "../model/document";
import {
  canEditReviews,
  canReview,
  mergeSummary,
  openReviewsText,
  threadPins,
  unreadCount,
  type Anchor,
  type Review,
  type ReviewSummary,
  type Role,
  type Thread,
  type ShownWindow,
} from "../model/reviews";
import { ReviewsApi } from "../sync/reviewsApi";
import { createGuardrailSettings } from "./reviewSettings";
import { button, el } from "./dom";
import { createCommentForm } from "./reviewCommentForm";
import { errorText } from "./reviewErrors";
import { meta, reviewHead, stateChip } from "./reviewHeader";
import { createNewReviewForm } from "./reviewNewForm";
import { threadView, type ThreadContext } from "./reviewThread";
import { createVerdictForm, verdictItem } from "./reviewVerdicts";
import { REVIEW_PLAN_EVENT, type ReviewPlanRequest } from "./reviewLinks";
export { showHeld, showUnread } from "./reviewLinks";

export interface ReviewsOptions {
  graphId: string;
  csrf: string;
  /** The review to show once the list has loaded (the page's ``?review=<id>``, from "Reviews for me"). */
  initial?: number | null;
  /** The thread of it to show (the permalink's ``&thread=<id>``, from a notification). */
  initialThread?: number | null;
  role(): Role | null;
  doc(): LoomDocument | null;
  version(): number | null;
  selected(): string[];
  /** The operation and index range the projection window shows, or null when it is closed. */
  window(): ShownWindow | null;
  /** Select and centre an anchor's node on the canvas; for a removed node, centre where it was. */
  show(anchor: Anchor, lastPosition: { x: number; y: number } | null): void;
  /** An apply of a suggestion named ``name`` is about to be posted: the edit id its ``applied``
   * will carry and the version it is based on, or why it cannot start. */
  beginApply(name: string): { editId: string; baseVersion: number } | string;
  /** The server refused the apply: its ``applied`` will never come. */
  cancelApply(editId: string): void;
  /** The review shown, or its threads, changed: the canvas redraws its pins. */
  pinsChanged?(): void;
}

export interface ReviewsPanel {
  element: HTMLElement;
  /** The editor's state changed (document, version, role, selection). */
  update(): void;
  /** A websocket ``review`` message. */
  event(event: string, summary: ReviewSummary): void;
  /** The reviews listed. */
  reviews(): ReviewSummary[];
  /** The canvas's pins: the review shown's unresolved threads per node. */
  pins(): ReadonlyMap<string, number>;
}

/** How long after a new version the reviews are fetched again (a burst of edits asks once). */
const REFETCH_MS = 400;

export function createReviewsPanel(options: ReviewsOptions): ReviewsPanel {
  const api = new ReviewsApi(options.csrf, options.graphId);
  const plansApi = new PlansApi(options.csrf, options.graphId);
  let reviews: ReviewSummary[] = [];
  let shown: Review | null = null;
  const readAt = new Map<number, number>();
  const drafts = new Map<number, string>();
  let loadedVersion: number | null = null;
  let role: Role | null = null;
  let timer: ReturnType<typeof setTimeout> | null = null;

  const count = el("span", { class: "geon-reviews-count small muted", role: "status" });
  const unread = el("span", {
    class: "geon-reviews-unread",
    title: "changes to reviews you have not read",
    hidden: "",
  });
  const newButton = button(
    "New review",
    "Ask reviewers to review a plan or the whole graph",
    () => void newForm.openForm(),
    "geon-small geon-review-new-open",
  );
  const error = el("p", { class: "geon-form-error geon-reviews-error", role: "alert" });
  const list = el("ul", {
    class: "geon-review-list",
    "aria-label": "reviews of this graph, newest first",
  });
  const view = el("div", { class: "geon-review-view", hidden: "" });

  const newForm = createNewReviewForm(api, plansApi, async (review) => {
    reviews = mergeSummary(reviews, review);
    await show(review.id);
  });
  const commentForm = createCommentForm(options, api, () => shown, refetchShown);
  const verdicts = createVerdictForm(api, () => shown, refetchShown);

  const element = el(
    "section",
    { class: "geon-panel geon-reviews", "aria-label": "reviews" },
    el(
      "div",
      { class: "geon-reviews-head" },
      el("h2", { text: "Reviews" }),
      count,
      unread,
      newButton,
    ),
    newForm.form,
    error,
    list,
    view,
    createGuardrailSettings(api, () => role === "owner"),
  );

  // a suggested plan's "Review" (ui/suggestions.ts) asks for this form with the plan chosen
  document.addEventListener(REVIEW_PLAN_EVENT, (e) => {
    const preset = (e as CustomEvent<ReviewPlanRequest>).detail;
    if (!canEditReviews(role))
      return void (error.textContent = `only editors and owners open reviews; you are a ${role ?? "visitor"} of this graph`);
    element.scrollIntoView({ block: "nearest" });
    void newForm.openForm(preset);
  });

  // --- loading -----------------------------------------------------------------------------
  async function loadList(): Promise<void> {
    try {
      reviews = await api.list();
      for (const r of reviews) readAt.set(r.id, r.activity - r.unread);
      error.textContent = "";
    } catch (e) {
      error.textContent = errorText(e);
    }
    renderList();
  }

  async function refetchShown(): Promise<void> {
    if (!shown) return;
    const id = shown.id;
    try {
      const review = await api.get(id);
      if (shown?.id !== id) return; // another review was opened meanwhile
      shown = review;
      reviews = mergeSummary(reviews, review);
      readAt.set(id, review.activity);
      void api.markRead(id).catch(() => undefined); // the badge is this page's; the mark only helps the next load
      error.textContent = "";
    } catch (e) {
      error.textContent = errorText(e);
    }
    renderList();
    renderShown();
  }

  async function show(id: number): Promise<void> {
    shown = { ...(reviews.find((r) => r.id === id) as ReviewSummary), threads: [] };
    verdicts.clear();
    await refetchShown();
  }

  /** The permalink's thread: pan to its anchor and mark it in the list. */
  function showInitialThread(): void {
    const thread = shown?.threads.find((t) => t.id === options.initialThread);
    if (!thread) return;
    options.show(thread.anchor, thread.lastPosition);
    const item = view.querySelector<HTMLElement>(`.geon-thread[data-thread="${thread.id}"]`);
    item?.classList.add("geon-thread-linked");
    item?.scrollIntoView({ block: "nearest" });
  }

  function scheduleRefetch(): void {
    if (timer !== null) clearTimeout(timer);
    timer = setTimeout(() => {
      timer = null;
      void loadList().then(refetchShown);
    }, REFETCH_MS);
  }

  // --- drawing -----------------------------------------------------------------------------
  function renderList(): void {
    count.textContent = openReviewsText(reviews);
    const n = unreadCount(reviews, readAt, shown?.id ?? null);
    unread.textContent = String(n);
    unread.hidden = n === 0;
    unread.setAttribute("aria-label", `${n} unread`);
    newButton.hidden = !canEditReviews(role);
    list.hidden = shown !== null;
    list.replaceChildren(
      ...reviews.map((r) =>
        el(
          "li",
          { class: "geon-review", "data-review": r.title },
          button(
            r.title,
            `Open the review "${r.title}"`,
            () => void show(r.id),
            "geon-review-link",
          ),
          stateChip(r),
          el("span", { class: "geon-review-meta small muted", text: meta(r) }),
        ),
      ),
    );
    if (!reviews.length) list.append(el("li", { class: "small muted", text: "No reviews yet." }));
  }

  const threadActions = {
    show: (anchor: Anchor, lastPosition: Thread["lastPosition"]) =>
      options.show(anchor, lastPosition),
    reply: async (t: Thread, body: string) => {
      try {
        await api.reply(shown!.id, t.id, body);
        await refetchShown();
        return null;
      } catch (e) {
        return errorText(e);
      }
    },
    resolve: (t: Thread, resolved: boolean) =>
      void write(() => api.resolve(shown!.id, t.id, resolved)),
    apply: (t: Thread) => void applySuggestion([t]),
  };

  async function write(call: () => Promise<unknown>): Promise<void> {
    try {
      await call();
      await refetchShown();
    } catch (e) {
      error.textContent = errorText(e);
    }
  }

  /** Apply one thread's suggestion, or several as one edit: either way one version and one undo step. */
  async function applySuggestion(threads: Thread[]): Promise<void> {
    const doc = options.doc();
    const named = threads.map((t) => {
      const op = t.anchor.region?.operation ?? t.anchor.node;
      const node = op ? doc?.nodes.find((n) => n.id === op) : undefined;
      return node ? nodeName(node) : t.anchorLabel;
    });
    const begun = options.beginApply(
      threads.length === 1
        ? `apply suggestion on ${named[0]}`
        : `apply ${threads.length} suggestions (${named.join(", ")})`,
    );
    if (typeof begun === "string") return void (error.textContent = begun);
    try {
      if (threads.length === 1)
        await api.apply(shown!.id, threads[0]!.id, begun.baseVersion, begun.editId);
      else
        await api.applyMany(
          threads.map((t) => t.id),
          begun.baseVersion,
          begun.editId,
        );
      await refetchShown();
    } catch (e) {
      options.cancelApply(begun.editId);
      error.textContent = errorText(e);
    }
  }

  let pins: Map<string, number> = new Map();
  function renderShown(): void {
    const now = threadPins(shown);
    if (JSON.stringify([...now]) !== JSON.stringify([...pins])) {
      pins = now;
      options.pinsChanged?.();
    }
    view.hidden = shown === null;
    if (!shown) return view.replaceChildren();
    const r = shown;
    const parts = reviewHead(r, {
      role,
      graphId: options.graphId,
      api,
      write,
      toList: () => {
        shown = null;
        renderList();
        renderShown();
      },
    });
    const ctx: ThreadContext = {
      doc: options.doc(),
      canReview: canReview(role),
      canEdit: canEditReviews(role),
      drafts,
    };
    const open = r.threads.filter((t) => !t.resolved).length;
    parts.push(el("h4", { text: `Threads (${open} open)` }));
    const pending = r.threads.filter((t) => t.suggestion && t.appliedVersion === null);
    if (ctx.canEdit && pending.length > 1)
      parts.push(
        button(
          `Apply all ${pending.length} suggestions`,
          "Apply every suggestion not applied yet as one edit (one undo step)",
          () => void applySuggestion(pending),
          "geon-small geon-apply-all",
        ),
      );
    parts.push(
      el(
        "ul",
        { class: "geon-threads" },
        ...r.threads.map((t) => threadView(t, ctx, threadActions)),
      ),
    );
    if (canReview(role) && r.state !== "closed") {
      commentForm.refreshAnchorNote();
      parts.push(commentForm.form);
    }
    parts.push(
      el("h4", { text: "Verdicts" }),
      el("ul", { class: "geon-verdicts" }, ...r.verdicts.map(verdictItem)),
    );
    if (!r.verdicts.length) parts.push(el("p", { class: "small muted", text: "No verdicts yet." }));
    if (canReview(role) && r.state !== "closed") {
      verdicts.refreshVerdictForm(r.verdictRefused ?? null);
      parts.push(verdicts.form);
    }
    // a rebuild keeps the focus where the user was typing
    const focused = document.activeElement;
    view.replaceChildren(...parts);
    if (focused instanceof HTMLElement && !view.contains(focused)) {
      const thread = focused.closest<HTMLElement>(".geon-thread")?.dataset.thread;
      if (thread)
        view.querySelector<HTMLElement>(`.geon-thread[data-thread="${thread}"] textarea`)?.focus();
    }
  }

  return {
    element,
    update() {
      const version = options.version();
      const nowRole = options.role();
      if (nowRole !== role) {
        role = nowRole;
        renderList();
        renderShown();
      }
      if (version === null || version === loadedVersion) {
        if (shown && !commentForm.form.hidden) commentForm.refreshAnchorNote();
        return;
      }
      const first = loadedVersion === null;
      loadedVersion = version;
      if (first)
        void loadList().then(() =>
          options.initial && reviews.some((r) => r.id === options.initial)
            ? show(options.initial).then(showInitialThread)
            : undefined,
        );
      else scheduleRefetch();
      if (shown) commentForm.refreshAnchorNote();
    },
    event(_event, summary) {
      reviews = mergeSummary(reviews, summary);
      if (shown?.id === summary.id) void refetchShown();
      else renderList();
    },
    reviews: () => reviews.map((r) => ({ ...r })),
    pins: () => pins,
  };
}
