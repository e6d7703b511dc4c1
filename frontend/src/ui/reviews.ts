// The Reviews panel of the editor (issue 18, docs/reviews.md): the graph's reviews ("2 open
// reviews", an unread badge that live events raise), a form to open one (editors and owners: a
// title, the plan under review or the whole graph, reviewers from the graph's members, a
// description), and the review shown: its threads (ui/reviewThread.ts), "Comment on selection"
// (a thread pinned to the selected node, or to the output window the projection window shows,
// optionally with a suggested split), its verdicts with the stale ones marked and why, and the
// verdict form, which lists each guardrail that refused an approval. Roles decide what shows:
// viewers read; reviewers comment and give verdicts (never on a review they opened: the form is
// disabled, saying why), and resolve threads (their own, or any of a review that asks them; the
// graph's owner any); editors and owners also open, close and
// reopen reviews and apply suggestions (the server checks every role again).
//
// Live: the websocket's ``review`` messages (``event``) refresh the list and the review shown;
// after each new version the panel fetches them again (debounced), so approvals that went stale
// show without a reload.

import "./reviews.css";
import { PlansApi } from "../api/plans";
import { nodeName, type LoomDocument } from "../model/document";
import type { EditOp } from "../model/edits";
import {
  canEditReviews,
  canReview,
  mergeSummary,
  openReviewsText,
  selectionAnchor,
  sinceVerdictText,
  staleText,
  stateText,
  threadPins,
  unreadCount,
  verdictLabel,
  anchorText,
  type Anchor,
  type Review,
  type ReviewSummary,
  type Role,
  type Thread,
  type Verdict,
  type VerdictKind,
  type ShownWindow,
} from "../model/reviews";
import { indexAxesOf } from "../model/shards";
import { ReviewsApi, ReviewsError } from "../sync/reviewsApi";
import { createGuardrailSettings } from "./reviewSettings";
import { button, el, submit } from "./dom";
import { renderMarkdown } from "./markdown";
import { threadView, type ThreadContext } from "./reviewThread";
import { downloadReview, REVIEW_PLAN_EVENT, type ReviewPlanRequest } from "./reviewLinks";
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

const VERDICTS: [VerdictKind, string][] = [
  ["approve", "Approve"],
  ["request_changes", "Request changes"],
  ["comment", "Comment"],
];

function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

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
    () => void openForm(),
    "geon-small geon-review-new-open",
  );
  const error = el("p", { class: "geon-form-error geon-reviews-error", role: "alert" });
  const list = el("ul", {
    class: "geon-review-list",
    "aria-label": "reviews of this graph, newest first",
  });
  const view = el("div", { class: "geon-review-view", hidden: "" });

  // --- the New review form ---------------------------------------------------------------
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
    form,
    error,
    list,
    view,
    createGuardrailSettings(api, () => role === "owner"),
  );

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

  // a suggested plan's "Review" (ui/suggestions.ts) asks for this form with the plan chosen
  document.addEventListener(REVIEW_PLAN_EVENT, (e) => {
    const preset = (e as CustomEvent<ReviewPlanRequest>).detail;
    if (!canEditReviews(role))
      return void (error.textContent = `only editors and owners open reviews; you are a ${role ?? "visitor"} of this graph`);
    element.scrollIntoView({ block: "nearest" });
    void openForm(preset);
  });

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
      reviews = mergeSummary(reviews, review);
      await show(review.id);
    } catch (e) {
      formError.textContent = errorText(e);
    }
  }

  // --- "Comment on selection" ----------------------------------------------------------------
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

  // --- the verdict form --------------------------------------------------------------------
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
    verdictError.textContent = "";
    guardrails.replaceChildren();
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
  function stateChip(r: ReviewSummary): HTMLElement {
    return el("span", {
      class: `geon-review-state state-${r.state}`,
      "data-state": r.state,
      text: stateText(r),
    });
  }

  function meta(r: ReviewSummary): string {
    const asks = r.reviewers.length ? `asks ${r.reviewers.join(", ")}` : "no reviewers";
    return `${r.plan ? r.plan.name : "whole graph"} · by ${r.author ?? "someone"} · ${asks}`;
  }

  function renderList(): void {
    count.textContent = openReviewsText(reviews);
    const n = unreadCount(reviews, readAt, shown?.id ?? null);
    unread.textContent = String(n);
    unread.hidden = n === 0;
    unread.setAttribute("aria-label", `${n} unread`);
    newButton.hidden = !canEditReviews(role);
    list.hidden = shown !== null;
    list.replaceChildren(
      ...reviews.map((r) => {
        const item = el(
          "li",
          { class: "geon-review", "data-review": r.title },
          el("button", {
            type: "button",
            class: "geon-review-link",
            text: r.title,
            title: `Open the review "${r.title}"`,
          }),
          stateChip(r),
          el("span", { class: "geon-review-meta small muted", text: meta(r) }),
        );
        item.querySelector("button")!.addEventListener("click", () => void show(r.id));
        return item;
      }),
    );
    if (!reviews.length) list.append(el("li", { class: "small muted", text: "No reviews yet." }));
  }

  function verdictItem(v: Verdict): HTMLElement {
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
    const back = button(
      "‹ All reviews",
      "Back to the list of reviews",
      () => {
        shown = null;
        renderList();
        renderShown();
      },
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
        () => downloadReview(r, options.graphId),
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
      refreshAnchorNote();
      parts.push(threadForm);
    }
    parts.push(
      el("h4", { text: "Verdicts" }),
      el("ul", { class: "geon-verdicts" }, ...r.verdicts.map(verdictItem)),
    );
    if (!r.verdicts.length) parts.push(el("p", { class: "small muted", text: "No verdicts yet." }));
    if (canReview(role) && r.state !== "closed") {
      refreshVerdictForm(r.verdictRefused ?? null);
      parts.push(verdictForm);
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
        if (shown && !threadForm.hidden) refreshAnchorNote();
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
      if (shown) refreshAnchorNote();
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
