// One thread of a review in the Reviews panel: what it is pinned to (with "Show", which selects
// and centres the anchor on the canvas), whether the anchor changed ("outdated", with the fields
// that changed) or was removed since the thread was written, its comments (Markdown rendered
// safely by ui/markdown.ts), its suggestion with "Apply suggestion" for editors, a reply box and
// resolve / reopen for reviewers. It renders what it is given and calls back; the panel
// (ui/reviews.ts) does the REST calls.

import type { LoomDocument } from "../model/document";
import {
  anchorNode,
  anchorText,
  outdatedText,
  suggestionText,
  type Anchor,
  type Thread,
} from "../model/reviews";
import { button, el, submit } from "./dom";
import { renderMarkdown } from "./markdown";

export interface ThreadActions {
  /** Select and centre the anchor's node on the canvas; for a removed one, centre where it was (``lastPosition``). */
  show(anchor: Anchor, lastPosition: Thread["lastPosition"]): void;
  /** Answers an error message, or null when the reply was stored. */
  reply(thread: Thread, body: string): Promise<string | null>;
  resolve(thread: Thread, resolved: boolean): void;
  apply(thread: Thread): void;
}

export interface ThreadContext {
  doc: LoomDocument | null;
  /** Reviewers and up: reply, resolve, reopen. */
  canReview: boolean;
  /** Editors and up: apply a suggestion. */
  canEdit: boolean;
  /** Reply drafts by thread id, kept while the panel is rebuilt by live events. */
  drafts: Map<number, string>;
}

function byline(author: string | null, version: number, created: string): string {
  const when = created ? new Date(created).toLocaleString() : "";
  return `${author ?? "someone"} · version ${version}${when ? ` · ${when}` : ""}`;
}

export function threadView(t: Thread, ctx: ThreadContext, act: ThreadActions): HTMLElement {
  const classes = [
    "geon-thread",
    t.outdated ? "geon-thread-outdated" : "",
    t.removed ? "geon-thread-removed" : "",
    t.resolved ? "geon-thread-resolved" : "",
  ].filter(Boolean);
  const label = anchorText(t.anchor, t.anchorLabel, ctx.doc);
  const head = el(
    "div",
    { class: "geon-thread-head" },
    el("span", { class: "geon-thread-anchor", text: label, title: `pinned to ${label}` }),
  );
  if (t.removed)
    head.append(
      el("span", { class: "geon-thread-mark removed", text: "removed", title: outdatedText(t) }),
    );
  else if (t.outdated)
    head.append(
      el("span", { class: "geon-thread-mark outdated", text: "outdated", title: outdatedText(t) }),
    );
  if (t.resolved) head.append(el("span", { class: "geon-thread-mark resolved", text: "resolved" }));
  if (anchorNode(t.anchor) !== null && (!t.removed || t.lastPosition)) {
    const title = t.removed
      ? `Show where ${label} was on the canvas`
      : `Select ${label} on the canvas`;
    head.append(
      button(
        "Show",
        title,
        () => act.show(t.anchor, t.lastPosition),
        "geon-small geon-thread-show",
      ),
    );
  }
  const parts: HTMLElement[] = [head];
  if (t.outdated)
    parts.push(el("p", { class: "geon-thread-changes small muted", text: outdatedText(t) }));
  // the thread's body is its first comment; ``comments`` are the replies
  for (const c of [
    { id: 0, author: t.author, body: t.body, version: t.version, created: t.created },
    ...t.comments,
  ]) {
    const body = el("div", { class: "geon-comment-body" });
    body.innerHTML = renderMarkdown(c.body);
    parts.push(
      el(
        "div",
        { class: "geon-comment", ...(c.id ? { "data-comment": String(c.id) } : {}) },
        el("div", {
          class: "geon-comment-by small muted",
          text: byline(c.author, c.version, c.created),
        }),
        body,
      ),
    );
  }
  if (t.suggestion) parts.push(suggestionView(t, ctx, act));
  // resolving is for the thread's author, the review's reviewers and the graph's owner: anyone
  // else who may review sees the control disabled, with the server's reason
  const refused = t.resolveRefused ?? null;
  const resolveTitle = (title: string) => refused ?? title;
  const resolve = (b: HTMLButtonElement) => ((b.disabled = refused !== null), b);
  if (ctx.canReview && !t.resolved)
    parts.push(
      replyForm(
        t,
        ctx,
        act,
        resolve(
          button(
            "Resolve",
            resolveTitle("Mark the thread resolved"),
            () => act.resolve(t, true),
            "geon-small geon-thread-resolve",
          ),
        ),
      ),
    );
  else if (ctx.canReview)
    parts.push(
      resolve(
        button(
          "Reopen",
          resolveTitle("Reopen the thread (it counts as unresolved again)"),
          () => act.resolve(t, false),
          "geon-small geon-thread-reopen",
        ),
      ),
    );
  return el(
    "li",
    { class: classes.join(" "), "data-thread": String(t.id), "data-anchor": label },
    ...parts,
  );
}

function suggestionView(t: Thread, ctx: ThreadContext, act: ThreadActions): HTMLElement {
  const ops = t.suggestion?.ops ?? [];
  const box = el(
    "div",
    { class: "geon-suggestion" },
    el("span", { class: "geon-suggestion-label small", text: "Suggestion: " }),
    el("span", { class: "geon-suggestion-text", text: suggestionText(ops, ctx.doc) }),
  );
  if (t.appliedVersion !== null)
    box.append(
      el("span", {
        class: "geon-suggestion-applied small muted",
        text: ` · applied in version ${t.appliedVersion}`,
      }),
    );
  else if (ctx.canEdit)
    box.append(
      button(
        "Apply suggestion",
        "Apply it as one edit (one undo step)",
        () => act.apply(t),
        "geon-small primary geon-apply-suggestion",
      ),
    );
  return box;
}

function replyForm(
  t: Thread,
  ctx: ThreadContext,
  act: ThreadActions,
  resolve: HTMLElement,
): HTMLElement {
  const text = el("textarea", {
    class: "geon-thread-reply-text",
    rows: "2",
    placeholder: "Reply (Markdown, @name mentions)",
    "aria-label": `reply to the thread on ${t.anchorLabel}`,
  });
  text.value = ctx.drafts.get(t.id) ?? "";
  text.addEventListener("input", () => ctx.drafts.set(t.id, text.value));
  const error = el("p", { class: "geon-form-error", role: "alert" });
  const form = el(
    "form",
    { class: "geon-thread-reply" },
    text,
    error,
    el(
      "div",
      { class: "geon-thread-actions" },
      submit("Reply", "Add the reply to the thread", "geon-small geon-thread-reply-send"),
      resolve,
    ),
  );
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    if (!text.value.trim()) {
      error.textContent = "write a reply first";
      return;
    }
    void act.reply(t, text.value).then((problem) => {
      error.textContent = problem ?? "";
      if (problem === null) ctx.drafts.delete(t.id);
    });
  });
  return form;
}
