// The REST client of a graph's reviews (docs/reviews.md): list, open, read, close and reopen
// reviews; threads, comments, resolve, apply a suggestion; verdicts; mark read; and the graph's
// members (the reviewers to choose from). Every failure becomes a ReviewsError with the server's
// sentence and code; a guardrail refusal (409 "guardrail") carries each guardrail that held.

import { ApiError, json, GraphRestClient } from "../api/client";
import type {
  Anchor,
  Comment,
  Guardrail,
  Review,
  ReviewSummary,
  Role,
  Thread,
  Verdict,
  VerdictKind,
} from "../model/reviews";
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

export class ReviewsApi extends GraphRestClient {
  /** The typed call's answer read as the editor's review types, its refusal a ReviewsError (with
   * the guardrails of a "guardrail" one). */
  private async call<T>(call: Promise<{ data?: unknown; response: Response }>): Promise<T> {
    try {
      return (await call).data as T;
    } catch (e) {
      if (!(e instanceof ApiError)) throw e;
      const guardrails = Array.isArray(e.details.guardrails)
        ? (e.details.guardrails as Guardrail[])
        : [];
      throw new ReviewsError(e.message, e.code, e.status, guardrails);
    }
  }

  settings(): Promise<GuardrailSettings> {
    return this.call(
      this.api.GET("/api/v1/graphs/{graph_id}/review-settings", { params: { path: this.graph } }),
    );
  }

  changeSettings(patch: Partial<GuardrailSettings>): Promise<GuardrailSettings> {
    return this.call(
      this.api.PATCH("/api/v1/graphs/{graph_id}/review-settings", {
        params: { path: this.graph },
        body: patch,
      }),
    );
  }

  async list(): Promise<ReviewSummary[]> {
    return (
      await this.call<{ reviews: ReviewSummary[] }>(
        this.api.GET("/api/v1/graphs/{graph_id}/reviews", { params: { path: this.graph } }),
      )
    ).reviews;
  }

  get(id: number): Promise<Review> {
    return this.call(
      this.api.GET("/api/v1/graphs/{graph_id}/reviews/{review_id}", {
        params: { path: { ...this.graph, review_id: id } },
      }),
    );
  }

  open(review: NewReview): Promise<Review> {
    const body = {
      title: review.title,
      description: review.description,
      reviewers: review.reviewers,
      ...(review.plan !== null ? { plan: review.plan } : {}),
    };
    return this.call(
      this.api.POST("/api/v1/graphs/{graph_id}/reviews", { params: { path: this.graph }, body }),
    );
  }

  /** Close or reopen. */
  setState(id: number, state: "open" | "closed"): Promise<Review> {
    return this.call(
      this.api.PATCH("/api/v1/graphs/{graph_id}/reviews/{review_id}", {
        params: { path: { ...this.graph, review_id: id } },
        body: { state },
      }),
    );
  }

  addThread(
    id: number,
    anchor: Anchor,
    body: string,
    suggestion: EditOp[] | null,
  ): Promise<Thread> {
    return this.call(
      this.api.POST("/api/v1/graphs/{graph_id}/reviews/{review_id}/threads", {
        params: { path: { ...this.graph, review_id: id } },
        body: {
          anchor: json(anchor),
          body,
          ...(suggestion ? { suggestion: json({ ops: suggestion }) } : {}),
        },
      }),
    );
  }

  reply(id: number, thread: number, body: string): Promise<Comment> {
    return this.call(
      this.api.POST("/api/v1/graphs/{graph_id}/reviews/{review_id}/threads/{thread_id}/comments", {
        params: { path: { ...this.graph, review_id: id, thread_id: thread } },
        body: { body },
      }),
    );
  }

  resolve(id: number, thread: number, resolved: boolean): Promise<Thread> {
    return this.call(
      this.api.PATCH("/api/v1/graphs/{graph_id}/reviews/{review_id}/threads/{thread_id}", {
        params: { path: { ...this.graph, review_id: id, thread_id: thread } },
        body: { resolved },
      }),
    );
  }

  /** Apply the thread's suggestion as one edit on ``baseVersion``; its websocket ``applied`` carries ``editId``. */
  apply(
    id: number,
    thread: number,
    baseVersion: number,
    editId: string,
  ): Promise<{ thread: Thread; version: number; ops: EditOp[] }> {
    return this.call(
      this.api.POST("/api/v1/graphs/{graph_id}/reviews/{review_id}/threads/{thread_id}/apply", {
        params: { path: { ...this.graph, review_id: id, thread_id: thread } },
        body: { baseVersion, editId },
      }),
    );
  }

  /** Apply several threads' suggestions as one edit on ``baseVersion`` (one version, one undo step). */
  applyMany(
    threads: number[],
    baseVersion: number,
    editId: string,
  ): Promise<{ threads: number[]; version: number; ops: EditOp[] }> {
    return this.call(
      this.api.POST("/api/v1/graphs/{graph_id}/reviews/apply", {
        params: { path: this.graph },
        body: { threads, baseVersion, editId },
      }),
    );
  }

  verdict(id: number, verdict: VerdictKind, body: string): Promise<Verdict> {
    return this.call(
      this.api.POST("/api/v1/graphs/{graph_id}/reviews/{review_id}/verdicts", {
        params: { path: { ...this.graph, review_id: id } },
        body: { verdict, body },
      }),
    );
  }

  /** Ask reviewers to review again (editors): each is notified. */
  requestAgain(id: number, reviewers: string[]): Promise<Review> {
    return this.call(
      this.api.POST("/api/v1/graphs/{graph_id}/reviews/{review_id}/requests", {
        params: { path: { ...this.graph, review_id: id } },
        body: { reviewers },
      }),
    );
  }

  markRead(id: number): Promise<unknown> {
    return this.call(
      this.api.POST("/api/v1/graphs/{graph_id}/reviews/{review_id}/read", {
        params: { path: { ...this.graph, review_id: id } },
      }),
    );
  }

  /** Who can be asked to review: the owner and every member but viewers, by username. */
  async reviewers(): Promise<string[]> {
    const answer = await this.call<{ owner: string; members: Member[] }>(
      this.api.GET("/api/v1/graphs/{graph_id}/members", { params: { path: this.graph } }),
    );
    return [answer.owner, ...answer.members.filter((m) => m.role !== "viewer").map((m) => m.user)];
  }
}
