// The REST client of a graph's reviews (docs/reviews.md): list, open, read, close and reopen
// reviews; threads, comments, resolve, apply a suggestion; verdicts; mark read; and the graph's
// members (the reviewers to choose from). Every failure becomes a ReviewsError with the server's
// sentence and code; a guardrail refusal (409 "guardrail") carries each guardrail that held.

import { ApiError, RestClient } from "../gallery/api";
import type { Anchor, Comment, Guardrail, Review, ReviewSummary, Role, Thread, Verdict, VerdictKind } from "../model/reviews";
import type { EditOp } from "../model/edits";

/** A refusal of the reviews API: the server's message, its code and, for "guardrail", which held. */
export class ReviewsError extends ApiError {
  constructor(
    message: string,
    code: string,
    status: number,
    readonly guardrails: Guardrail[] = [],
  ) {
    super(message, code, status);
  }
}

/** The graph's guardrails on approvals (``GET/PATCH /graphs/<id>/review-settings``). */
export interface GuardrailSettings {
  requireResolvedThreads: boolean;
  blockOnErrors: boolean;
  blockOverCapacity: boolean;
  profile: string;
  profiles: string[];
}

export interface NewReview {
  title: string;
  description: string;
  plan: number | null;
  reviewers: string[];
}

export interface Member {
  user: string;
  role: Role;
}

export class ReviewsApi extends RestClient {
  constructor(
    base: string,
    csrf: string,
    private readonly graphId: string,
  ) {
    super(base, csrf);
  }

  private get graph(): string {
    return `/graphs/${this.graphId}`;
  }

  /** The REST call, its refusal a ReviewsError (with the guardrails of a "guardrail" one). */
  protected override async call<T>(method: string, path: string, body?: unknown): Promise<T> {
    try {
      return await super.call<T>(method, path, body);
    } catch (e) {
      if (!(e instanceof ApiError)) throw e;
      const guardrails = Array.isArray(e.details.guardrails) ? (e.details.guardrails as Guardrail[]) : [];
      throw new ReviewsError(e.message, e.code, e.status, guardrails);
    }
  }

  settings(): Promise<GuardrailSettings> {
    return this.call("GET", `${this.graph}/review-settings`);
  }

  changeSettings(patch: Partial<GuardrailSettings>): Promise<GuardrailSettings> {
    return this.call("PATCH", `${this.graph}/review-settings`, patch);
  }

  async list(): Promise<ReviewSummary[]> {
    return (await this.call<{ reviews: ReviewSummary[] }>("GET", `${this.graph}/reviews`)).reviews;
  }

  get(id: number): Promise<Review> {
    return this.call("GET", `${this.graph}/reviews/${id}`);
  }

  open(review: NewReview): Promise<Review> {
    const body: Record<string, unknown> = { title: review.title, description: review.description, reviewers: review.reviewers };
    if (review.plan !== null) body.plan = review.plan;
    return this.call("POST", `${this.graph}/reviews`, body);
  }

  /** Close or reopen. */
  setState(id: number, state: "open" | "closed"): Promise<Review> {
    return this.call("PATCH", `${this.graph}/reviews/${id}`, { state });
  }

  addThread(id: number, anchor: Anchor, body: string, suggestion: EditOp[] | null): Promise<Thread> {
    return this.call("POST", `${this.graph}/reviews/${id}/threads`, { anchor, body, ...(suggestion ? { suggestion: { ops: suggestion } } : {}) });
  }

  reply(id: number, thread: number, body: string): Promise<Comment> {
    return this.call("POST", `${this.graph}/reviews/${id}/threads/${thread}/comments`, { body });
  }

  resolve(id: number, thread: number, resolved: boolean): Promise<Thread> {
    return this.call("PATCH", `${this.graph}/reviews/${id}/threads/${thread}`, { resolved });
  }

  /** Apply the thread's suggestion as one edit on ``baseVersion``; its websocket ``applied`` carries ``editId``. */
  apply(id: number, thread: number, baseVersion: number, editId: string): Promise<{ thread: Thread; version: number; ops: EditOp[] }> {
    return this.call("POST", `${this.graph}/reviews/${id}/threads/${thread}/apply`, { baseVersion, editId });
  }

  /** Apply several threads' suggestions as one edit on ``baseVersion`` (one version, one undo step). */
  applyMany(threads: number[], baseVersion: number, editId: string): Promise<{ threads: number[]; version: number; ops: EditOp[] }> {
    return this.call("POST", `${this.graph}/reviews/apply`, { threads, baseVersion, editId });
  }

  verdict(id: number, verdict: VerdictKind, body: string): Promise<Verdict> {
    return this.call("POST", `${this.graph}/reviews/${id}/verdicts`, { verdict, body });
  }

  /** Ask reviewers to review again (editors): each is notified. */
  requestAgain(id: number, reviewers: string[]): Promise<Review> {
    return this.call("POST", `${this.graph}/reviews/${id}/requests`, { reviewers });
  }

  markRead(id: number): Promise<unknown> {
    return this.call("POST", `${this.graph}/reviews/${id}/read`);
  }

  /** Who can be asked to review: the owner and every member but viewers, by username. */
  async reviewers(): Promise<string[]> {
    const answer = await this.call<{ owner: string; members: Member[] }>("GET", `${this.graph}/members`);
    return [answer.owner, ...answer.members.filter((m) => m.role !== "viewer").map((m) => m.user)];
  }
}
