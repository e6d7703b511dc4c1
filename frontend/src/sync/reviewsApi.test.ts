import { afterEach, describe, expect, it, vi } from "vitest";
import { ReviewsApi, ReviewsError } from "./reviewsApi";

function answer(status: number, body: unknown): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "Content-Type": "application/json" },
  });
}

function mockFetch(...responses: Response[]) {
  const calls: { url: string; method: string; body: unknown }[] = [];
  vi.stubGlobal("fetch", async (request: Request) => {
    const body = await request.text();
    calls.push({
      url: new URL(request.url).pathname,
      method: request.method,
      body: body ? JSON.parse(body) : undefined,
    });
    return responses.shift()!;
  });
  return calls;
}

afterEach(() => vi.unstubAllGlobals());

describe("the reviews REST client", () => {
  const api = new ReviewsApi("tok", "g1");

  it("opens a review of a plan, leaving the plan out for the whole graph", async () => {
    const calls = mockFetch(answer(201, { id: 3 }), answer(201, { id: 4 }));
    await api.open({ title: "Megatron", description: "", plan: 2, reviewers: ["bob"] });
    await api.open({ title: "All", description: "d", plan: null, reviewers: [] });
    expect(calls).toEqual([
      {
        url: "/api/v1/graphs/g1/reviews",
        method: "POST",
        body: { title: "Megatron", description: "", reviewers: ["bob"], plan: 2 },
      },
      {
        url: "/api/v1/graphs/g1/reviews",
        method: "POST",
        body: { title: "All", description: "d", reviewers: [] },
      },
    ]);
  });

  it("sends the edit id the applied message will carry", async () => {
    const calls = mockFetch(answer(200, { thread: {}, version: 5, ops: [] }));
    await api.apply(3, 7, 4, "review-abc");
    expect(calls).toEqual([
      {
        url: "/api/v1/graphs/g1/reviews/3/threads/7/apply",
        method: "POST",
        body: { baseVersion: 4, editId: "review-abc" },
      },
    ]);
  });

  it("applies several suggestions as one edit", async () => {
    const calls = mockFetch(answer(200, { threads: [7, 8], version: 5, ops: [] }));
    await api.applyMany([7, 8], 4, "review-abc");
    expect(calls).toEqual([
      {
        url: "/api/v1/graphs/g1/reviews/apply",
        method: "POST",
        body: { threads: [7, 8], baseVersion: 4, editId: "review-abc" },
      },
    ]);
  });

  it("turns a guardrail refusal into an error listing each guardrail", async () => {
    const guardrails = [{ name: "requireResolvedThreads", message: "1 thread is unresolved" }];
    mockFetch(
      answer(409, { error: { code: "guardrail", message: "the approval is refused", guardrails } }),
    );
    const refusal = await api.verdict(3, "approve", "").catch((e: unknown) => e);
    expect(refusal).toBeInstanceOf(ReviewsError);
    const { message, code, status } = refusal as ReviewsError;
    expect({ message, code, status, guardrails: (refusal as ReviewsError).guardrails }).toEqual({
      message: "the approval is refused",
      code: "guardrail",
      status: 409,
      guardrails,
    });
  });

  it("names the status when the server gave no envelope", async () => {
    mockFetch(new Response("oops", { status: 502, statusText: "Bad Gateway" }));
    await expect(api.list()).rejects.toThrow("the server answered 502 Bad Gateway");
  });

  it("offers the owner and every member who may review, not viewers", async () => {
    mockFetch(
      answer(200, {
        owner: "alice",
        members: [
          { user: "bob", role: "reviewer" },
          { user: "carol", role: "viewer" },
          { user: "dan", role: "editor" },
        ],
      }),
    );
    expect(await api.reviewers()).toEqual(["alice", "bob", "dan"]);
  });
});
