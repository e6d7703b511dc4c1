// Reviews of shard plans (issue 18, docs/reviews.md): the JSON shapes the REST API answers and
// the pure rules the Reviews panel shows them by: a state's words, how many reviews are open and
// unread, who may do what, a thread's anchor in words when the server gave none, and the anchor
// of "Comment on selection". Nothing here fetches or draws.

import { OPERATION, nodeById, nodeName, type LoomDocument, type LoomNode } from "./document";
import type { EditOp } from "./edits";

export type ReviewState = "open" | "approved" | "changes_requested" | "closed";
export type VerdictKind = "approve" | "request_changes" | "comment";
export type Role = "viewer" | "reviewer" | "editor" | "owner";

/** A range of an operation's index space (start inclusive, end exclusive). */
export interface RegionAnchor {
  operation: string;
  start: number[];
  end: number[];
}

/** What a thread is pinned to: at most one of these. */
export interface Anchor {
  node?: string;
  axis?: string;
  edge?: { from: string; to: string };
  region?: RegionAnchor;
}

export interface Comment {
  id: number;
  author: string | null;
  body: string;
  version: number;
  created: string;
}

export interface Thread {
  id: number;
  anchor: Anchor;
  anchorLabel: string;
  body: string;
  author: string | null;
  version: number;
  resolved: boolean;
  /** Why the caller may not resolve or reopen it (its author, the review's reviewers and the graph's owner may); null: they may. */
  resolveRefused?: string | null;
  outdated: boolean;
  removed: boolean;
  changes: string[];
  lastPosition: { x: number; y: number } | null;
  suggestion: { ops: EditOp[] } | null;
  appliedVersion: number | null;
  /** The replies (the thread's ``body`` is its first comment). */
  comments: Comment[];
  created: string;
}

export interface Verdict {
  id: number;
  user: string | null;
  /** Whether the review asks this user: only such a reviewer's approval makes it approved. */
  requested?: boolean;
  verdict: VerdictKind;
  body: string;
  version: number;
  stale: boolean;
  staleBecause: string[];
  created: string;
}

/** A review as listed (everything but its threads). */
export interface ReviewSummary {
  id: number;
  title: string;
  description: string;
  state: ReviewState;
  plan: { id: number; name: string } | null;
  version: number;
  currentVersion: number;
  author: string | null;
  reviewers: string[];
  created: string;
  updated: string;
  unread: number;
  activity: number;
  openThreads: number;
  verdicts: Verdict[];
}

export interface Review extends ReviewSummary {
  threads: Thread[];
  /** Why the caller may not give it a verdict (its author may not); null: they may. */
  verdictRefused?: string | null;
  /** What changed since the caller's latest verdict (null: none given, or nothing changed). */
  sinceYourVerdict?: SinceVerdict | null;
}

/** The review's ``sinceYourVerdict`` (docs/reviews.md, Notifications). */
export interface SinceVerdict {
  verdict: number;
  given: VerdictKind;
  version: number;
  currentVersion: number;
  stale: boolean;
  changes: string[];
  versionDiff: string | null;
  page: string | null;
}

/** One guardrail that refused an approval. */
export interface Guardrail {
  name: string;
  message: string;
}

const STATE_WORDS: Record<ReviewState, string> = {
  open: "open",
  approved: "approved",
  changes_requested: "changes requested",
  closed: "closed",
};

const VERDICT_WORDS: Record<VerdictKind, string> = {
  approve: "approved",
  request_changes: "requested changes",
  comment: "commented",
};

/** A review's state as people read it ("changes requested"). */
export function stateLabel(state: ReviewState): string {
  return STATE_WORDS[state] ?? state;
}

/** The state's words with what still holds it open: "approved · 1 unresolved" when a thread is open after the approval. */
export function stateText(review: Pick<ReviewSummary, "state" | "openThreads">): string {
  const words = stateLabel(review.state);
  const open = review.openThreads ?? 0;
  return review.state !== "closed" && open > 0 ? `${words} · ${open} unresolved` : words;
}

/** "Changes since your last verdict": the sentence the reviewer reads above the review. */
export function sinceVerdictText(since: SinceVerdict): string {
  const what = since.changes.length
    ? `: ${since.changes.slice(0, 5).join(", ")}${since.changes.length > 5 ? ` and ${since.changes.length - 5} more` : ""}`
    : "";
  const moved =
    since.version === since.currentVersion
      ? "the plan changed"
      : `version ${since.version} → ${since.currentVersion}`;
  return `Changes since your last verdict (${verdictLabel(since.given)} at version ${since.version}; ${moved})${since.stale ? what : ": nothing your verdict covered"}`;
}

/** The review as Markdown ("Export review"): its state, plan, reviewers, threads with their anchors and replies, and verdicts. */
export function reviewMarkdown(
  review: Review,
  permalink: (thread: number | null) => string,
): string {
  const lines = [
    `# ${review.title}`,
    "",
    `- State: ${stateText(review)}`,
    `- Plan: ${review.plan ? review.plan.name : "the whole graph"}`,
    `- Author: ${review.author ?? "(deleted account)"}`,
    `- Reviewers: ${review.reviewers.join(", ") || "none"}`,
    `- From version ${review.version} (now ${review.currentVersion})`,
    `- Link: ${permalink(null)}`,
  ];
  if (review.description) lines.push("", review.description);
  lines.push("", `## Threads (${review.threads.filter((t) => !t.resolved).length} open)`);
  for (const t of review.threads) {
    const marks = [
      t.resolved ? "resolved" : "open",
      ...(t.outdated ? ["outdated"] : []),
      ...(t.suggestion
        ? [
            t.appliedVersion !== null
              ? `suggestion applied at version ${t.appliedVersion}`
              : "suggestion",
          ]
        : []),
    ];
    lines.push(
      "",
      `### On ${t.anchorLabel} (${marks.join(", ")})`,
      "",
      `**${t.author ?? "someone"}** at version ${t.version}: ${t.body}`,
    );
    for (const c of t.comments)
      lines.push("", `**${c.author ?? "someone"}** at version ${c.version}: ${c.body}`);
    lines.push("", `[Open the thread](${permalink(t.id)})`);
  }
  lines.push("", "## Verdicts", "");
  if (!review.verdicts.length) lines.push("No verdicts yet.");
  for (const v of review.verdicts)
    lines.push(
      `- ${v.user ?? "someone"} ${verdictLabel(v.verdict)} at version ${v.version}${v.stale ? ` (stale: ${v.staleBecause.join(", ") || "changed since"})` : ""}${v.body ? `: ${v.body}` : ""}`,
    );
  return `${lines.join("\n")}\n`;
}

/** A verdict as a verb ("approved", "requested changes", "commented"). */
export function verdictLabel(verdict: VerdictKind): string {
  return VERDICT_WORDS[verdict] ?? verdict;
}

/** Reviews still under way: every one not closed (approved and changes requested are still open to more verdicts). */
export function openReviews(reviews: readonly ReviewSummary[]): number {
  return reviews.filter((r) => r.state !== "closed").length;
}

/** The panel's header count: "no open reviews", "1 open review", "2 open reviews". */
export function openReviewsText(reviews: readonly ReviewSummary[]): string {
  const n = openReviews(reviews);
  return n === 0 ? "no open reviews" : `${n} open review${n === 1 ? "" : "s"}`;
}

/**
 * The activity of review ``r`` this user has read: ``readAt``'s when the panel knows it (a
 * fetch said how many were unread, or the user read it since), else none of it (a review first
 * heard of from a live event, whose summary does not say what this user has read).
 */
function readActivity(r: ReviewSummary, readAt: ReadonlyMap<number, number>): number {
  return readAt.get(r.id) ?? (typeof r.unread === "number" ? r.activity - r.unread : 0);
}

/**
 * The unread badge: the changes of each review (its ``activity``) since this user read it, but
 * the review being read now (``reading``); live events raise a review's activity.
 */
export function unreadCount(
  reviews: readonly ReviewSummary[],
  readAt: ReadonlyMap<number, number>,
  reading: number | null,
): number {
  let total = 0;
  for (const r of reviews)
    if (r.id !== reading) total += Math.max(0, r.activity - readActivity(r, readAt));
  return total;
}

/** ``summary`` in the list: replaced where it is, else first (the list is newest first). */
export function mergeSummary(
  reviews: readonly ReviewSummary[],
  summary: ReviewSummary,
): ReviewSummary[] {
  const at = reviews.findIndex((r) => r.id === summary.id);
  if (at < 0) return [summary, ...reviews];
  return reviews.map((r, i) => (i === at ? { ...r, ...summary } : r));
}

/** Who may comment and give verdicts: reviewers, editors and owners. */
export function canReview(role: Role | null): boolean {
  return role === "reviewer" || role === "editor" || role === "owner";
}

/** Who may open and close reviews and apply suggestions: editors and owners. */
export function canEditReviews(role: Role | null): boolean {
  return role === "editor" || role === "owner";
}

/**
 * A thread's anchor in words: the server's ``anchorLabel`` when it gave one, else from the
 * document (a removed node is named by its id, which is all that is left of it).
 */
export function anchorText(anchor: Anchor, label: string, doc: LoomDocument | null): string {
  if (label) return label;
  const nodes = doc ? nodeById(doc) : new Map<string, LoomNode>();
  const name = (id: string) => {
    const n = nodes.get(id);
    return n ? nodeName(n) : `removed node ${id}`;
  };
  if (anchor.region)
    return `${name(anchor.region.operation)} · window [${anchor.region.start.join(", ")}]–[${anchor.region.end.join(", ")}]`;
  if (anchor.edge) return `${name(anchor.edge.from)} → ${name(anchor.edge.to)}`;
  if (anchor.node) return name(anchor.node);
  if (anchor.axis) return `axis ${anchor.axis}`;
  return "the whole graph";
}

/** The node the canvas shows for an anchor ("Show"): the node, the region's operation, the edge's head; null for an axis. */
export function anchorNode(anchor: Anchor): string | null {
  return anchor.node ?? anchor.region?.operation ?? anchor.edge?.to ?? null;
}

/** The review and thread a page's address names (``?review=<id>&thread=<id>``, a permalink). */
export function permalinkTarget(search: string): {
  initial: number | null;
  initialThread: number | null;
} {
  const query = new URLSearchParams(search);
  return {
    initial: Number(query.get("review")) || null,
    initialThread: Number(query.get("thread")) || null,
  };
}

/** The canvas's pins of a review (issue 35): how many unresolved threads each node holds (an
 * edge's at its head, a region's at its operation; a removed node's none). */
export function threadPins(review: Pick<Review, "threads"> | null): Map<string, number> {
  const pins = new Map<string, number>();
  for (const t of review?.threads ?? []) {
    const node = t.resolved || t.removed ? null : anchorNode(t.anchor);
    if (node) pins.set(node, (pins.get(node) ?? 0) + 1);
  }
  return pins;
}

/** What the projection window shows: an operation and the range of its index space in view (the pick or the whole space). */
export interface ShownWindow {
  operation: string;
  start: number[];
  end: number[];
}

/**
 * The anchor of "Comment on selection": the region the projection window shows (an operation's
 * output window), else the one selected node; a string says why there is none.
 */
export function selectionAnchor(
  doc: LoomDocument | null,
  selected: readonly string[],
  window: ShownWindow | null,
): Anchor | string {
  if (!doc) return "the graph has not loaded yet";
  const nodes = nodeById(doc);
  if (window && nodes.get(window.operation)?.type === OPERATION) {
    return {
      region: { operation: window.operation, start: [...window.start], end: [...window.end] },
    };
  }
  if (selected.length !== 1)
    return selected.length
      ? `select one node to comment on, not ${selected.length}`
      : "select a node (or open an operation's projection window) to comment on it";
  if (!nodes.has(selected[0]!)) return "the selected node is no longer in the graph";
  return { node: selected[0]! };
}

/** Why a verdict is stale, in one line: "stale: dot 2's Placement changed since version 13". */
export function staleText(v: Verdict): string {
  if (!v.stale) return "";
  const why = v.staleBecause.length ? v.staleBecause.join("; ") : "the plan changed";
  return `stale since version ${v.version}: ${why}`;
}

/** What happened to an outdated thread's anchor: "changed since version 3: body.kernel, tags.Placement", or that it was removed. */
export function outdatedText(t: Pick<Thread, "removed" | "changes" | "version">): string {
  if (t.removed) return "its anchor was removed from the graph";
  return t.changes.length
    ? `changed since version ${t.version}: ${t.changes.join(", ")}`
    : `changed since version ${t.version}`;
}

/** A suggestion in words: "split dot 2 along N into 2 parts", else what its ops do by kind. */
export function suggestionText(ops: readonly EditOp[], doc: LoomDocument | null): string {
  const nodes = doc ? nodeById(doc) : new Map<string, LoomNode>();
  const name = (id: unknown) => {
    const n = typeof id === "string" ? nodes.get(id) : undefined;
    return n ? nodeName(n) : `node ${String(id)}`;
  };
  const words = ops.map((op) => {
    const o = op as unknown as Record<string, unknown>;
    if (o.op === "shard") {
      if (o.grid && typeof o.grid === "object")
        return `split ${name(o.operation)} on a grid ${Object.entries(
          o.grid as Record<string, number>,
        )
          .map(([a, k]) => `${a}=${k}`)
          .join(", ")}`;
      const how =
        o.parts !== undefined ? `into ${String(o.parts)} parts` : `in chunks of ${String(o.chunk)}`;
      return `split ${name(o.operation)} along ${String(o.dim)} ${how}`;
    }
    const node = o.node as { id?: unknown } | undefined;
    return `${String(o.op).replace(/_/g, " ")} ${name(o.id ?? node?.id)}`;
  });
  return words.join("; ");
}
