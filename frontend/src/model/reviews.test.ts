import { describe, expect, it } from "vitest";
import { OPERATION, TENSOR, type LoomDocument } from "./document";
import {
  anchorNode,
  anchorText,
  canEditReviews,
  canReview,
  mergeSummary,
  openReviewsText,
  outdatedText,
  reviewMarkdown,
  selectionAnchor,
  sinceVerdictText,
  staleText,
  stateLabel,
  stateText,
  suggestionText,
  threadPins,
  unreadCount,
  type Review,
  type ReviewSummary,
  type Verdict,
} from "./reviews";

function summary(id: number, state: ReviewSummary["state"], unread = 0): ReviewSummary {
  return {
    id,
    title: `review ${id}`,
    description: "",
    state,
    plan: null,
    version: 1,
    currentVersion: 1,
    author: "alice",
    reviewers: ["bob"],
    created: "",
    updated: "",
    unread,
    activity: 0,
    openThreads: 0,
    verdicts: [],
  };
}

function verdict(
  user: string,
  kind: Verdict["verdict"],
  stale = false,
  staleBecause: string[] = [],
): Verdict {
  return { id: 1, user, verdict: kind, body: "", version: 3, stale, staleBecause, created: "" };
}

const doc: LoomDocument = {
  id: "g",
  nodes: [
    { id: "op1", type: OPERATION, label: "dot 2", body: { kernel: "dot" } },
    { id: "op2", type: OPERATION, body: { kernel: "relu" } },
    { id: "t1", type: TENSOR, body: { name: "x" } },
  ],
};

describe("review words", () => {
  it.each([
    ["open", "open"],
    ["approved", "approved"],
    ["changes_requested", "changes requested"],
    ["closed", "closed"],
  ] as const)("state %s reads %s", (state, words) => {
    expect(stateLabel(state)).toBe(words);
  });

  it("counts every review not closed as open", () => {
    expect(openReviewsText([])).toBe("no open reviews");
    expect(openReviewsText([summary(1, "open"), summary(2, "closed")])).toBe("1 open review");
    expect(
      openReviewsText([
        summary(1, "approved"),
        summary(2, "changes_requested"),
        summary(3, "closed"),
      ]),
    ).toBe("2 open reviews");
  });

  it("says why an approval is stale, and nothing for a fresh one", () => {
    expect(staleText(verdict("bob", "approve"))).toBe("");
    expect(staleText(verdict("bob", "approve", true, ['"dot 2": tags.Placement']))).toBe(
      'stale since version 3: "dot 2": tags.Placement',
    );
    expect(staleText(verdict("bob", "approve", true))).toBe(
      "stale since version 3: the plan changed",
    );
  });

  it("says what changed under an outdated thread, or that its anchor is gone", () => {
    expect(
      outdatedText({ removed: false, changes: ["body.kernel", "tags.Placement"], version: 3 }),
    ).toBe("changed since version 3: body.kernel, tags.Placement");
    expect(outdatedText({ removed: true, changes: [], version: 3 })).toBe(
      "its anchor was removed from the graph",
    );
  });
});

describe("unread and live summaries", () => {
  it("counts each review's changes since this user read it, but the review being read", () => {
    const reviews = [
      { ...summary(1, "open", 2), activity: 5 },
      { ...summary(2, "open", 1), activity: 4 },
    ];
    expect(unreadCount(reviews, new Map(), null)).toBe(3);
    // read as fetched (review 1 at 3 of 5), then a live event raised review 1's activity by two; review 2 was read since
    expect(
      unreadCount(
        [{ ...reviews[0]!, activity: 7 }, reviews[1]!],
        new Map([
          [1, 3],
          [2, 4],
        ]),
        null,
      ),
    ).toBe(4);
    expect(unreadCount(reviews, new Map(), 1)).toBe(1);
    // a review first heard of from a live event (no unread in its summary): all of it is unread
    const heard = { ...summary(3, "open"), activity: 2, unread: undefined as unknown as number };
    expect(unreadCount([heard], new Map(), null)).toBe(2);
  });

  it("replaces a known summary in place and puts a new one first", () => {
    const reviews = [summary(2, "open"), summary(1, "open")];
    expect(mergeSummary(reviews, summary(1, "approved")).map((r) => `${r.id}:${r.state}`)).toEqual([
      "2:open",
      "1:approved",
    ]);
    expect(mergeSummary(reviews, summary(3, "open")).map((r) => r.id)).toEqual([3, 2, 1]);
  });
});

describe("roles", () => {
  it.each([
    ["viewer", false, false],
    ["reviewer", true, false],
    ["editor", true, true],
    ["owner", true, true],
    [null, false, false],
  ] as const)("a %s reviews: %s, opens and applies: %s", (role, review, edit) => {
    expect(canReview(role)).toBe(review);
    expect(canEditReviews(role)).toBe(edit);
  });
});

describe("anchors", () => {
  it("takes the server's label, else names the anchor from the document", () => {
    expect(anchorText({ node: "op1" }, "dot 2 · output", doc)).toBe("dot 2 · output");
    expect(anchorText({ node: "op1" }, "", doc)).toBe("dot 2");
    expect(anchorText({ node: "op2" }, "", doc)).toBe("relu");
    expect(anchorText({ node: "t1" }, "", doc)).toBe("x");
    expect(anchorText({ node: "gone" }, "", doc)).toBe("removed node gone");
    expect(anchorText({ edge: { from: "t1", to: "op2" } }, "", doc)).toBe("x → relu");
    expect(anchorText({ axis: "H" }, "", null)).toBe("axis H");
    expect(anchorText({ region: { operation: "op1", start: [0, 0], end: [4, 8] } }, "", doc)).toBe(
      "dot 2 · window [0, 0]–[4, 8]",
    );
  });

  it("shows the node, the region's operation or the edge's head", () => {
    expect(anchorNode({ node: "t1" })).toBe("t1");
    expect(anchorNode({ region: { operation: "op1", start: [0], end: [1] } })).toBe("op1");
    expect(anchorNode({ edge: { from: "t1", to: "op2" } })).toBe("op2");
    expect(anchorNode({ axis: "H" })).toBeNull();
  });

  it("comments on the window shown, else the one selected node, else says why not", () => {
    expect(selectionAnchor(doc, ["t1"], { operation: "op1", start: [0, 0], end: [2, 4] })).toEqual({
      region: { operation: "op1", start: [0, 0], end: [2, 4] },
    });
    expect(selectionAnchor(doc, ["t1"], null)).toEqual({ node: "t1" });
    expect(selectionAnchor(doc, [], null)).toBe(
      "select a node (or open an operation's projection window) to comment on it",
    );
    expect(selectionAnchor(doc, ["t1", "op1"], null)).toBe("select one node to comment on, not 2");
    expect(selectionAnchor(doc, ["gone"], null)).toBe(
      "the selected node is no longer in the graph",
    );
    expect(selectionAnchor(null, ["t1"], null)).toBe("the graph has not loaded yet");
  });
});

describe("suggestions in words", () => {
  it("names the operation a split applies to, and any other op by kind", () => {
    expect(
      suggestionText([{ op: "shard", operation: "op1", dim: "N", parts: 2 } as never], doc),
    ).toBe("split dot 2 along N into 2 parts");
    expect(
      suggestionText([{ op: "shard", operation: "op1", dim: "N", chunk: 8 } as never], doc),
    ).toBe("split dot 2 along N in chunks of 8");
    expect(
      suggestionText([{ op: "shard", operation: "op1", grid: { H: 2, N: 2 } } as never], doc),
    ).toBe("split dot 2 on a grid H=2, N=2");
    expect(
      suggestionText(
        [
          { op: "remove_node", id: "t1" },
          { op: "update_node", id: "gone", patch: {} },
        ] as never,
        doc,
      ),
    ).toBe("remove node x; update node node gone");
  });
});

describe("issue 35: state with unresolved threads, changes since a verdict, Markdown export", () => {
  it("shows '1 unresolved' beside a state an open thread holds", () => {
    expect(stateText({ state: "approved", openThreads: 1 })).toBe("approved · 1 unresolved");
    expect(stateText({ state: "approved", openThreads: 0 })).toBe("approved");
    expect(stateText({ state: "closed", openThreads: 2 })).toBe("closed");
  });

  it("says what changed since the reviewer's last verdict", () => {
    const since = {
      verdict: 4,
      given: "request_changes" as const,
      version: 3,
      currentVersion: 5,
      stale: true,
      changes: ['"dot 2": body.params'],
      versionDiff: "/api/v1/graphs/g/versions/3/diff/5",
      page: "/graphs/g/diff/3/5/",
    };
    expect(sinceVerdictText(since)).toBe(
      'Changes since your last verdict (requested changes at version 3; version 3 → 5): "dot 2": body.params',
    );
    expect(sinceVerdictText({ ...since, currentVersion: 3, stale: false, changes: [] })).toBe(
      "Changes since your last verdict (requested changes at version 3; the plan changed): nothing your verdict covered",
    );
  });

  it("exports a review as Markdown with its anchors, replies, verdicts and permalinks", () => {
    const review: Review = {
      ...summary(7, "approved"),
      title: "Megatron split",
      openThreads: 1,
      threads: [
        {
          id: 9,
          anchor: { node: "op1" },
          anchorLabel: "op:dot -> up",
          body: "why 4?",
          author: "bob",
          version: 3,
          resolved: false,
          outdated: false,
          removed: false,
          changes: [],
          lastPosition: null,
          suggestion: null,
          appliedVersion: null,
          comments: [{ id: 2, author: "alice", body: "memory", version: 3, created: "" }],
          created: "",
        },
      ],
      verdicts: [{ ...verdict("bob", "approve"), body: "LGTM" }],
    };
    const text = reviewMarkdown(
      review,
      (t) => `https://geon/graphs/g/?review=7${t === null ? "" : `&thread=${t}`}`,
    );
    expect(text).toContain(
      "# Megatron split\n\n- State: approved · 1 unresolved\n- Plan: the whole graph",
    );
    expect(text).toContain(
      "### On op:dot -> up (open)\n\n**bob** at version 3: why 4?\n\n**alice** at version 3: memory\n\n[Open the thread](https://geon/graphs/g/?review=7&thread=9)",
    );
    expect(text).toContain("- bob approved at version 3: LGTM");
  });
});

describe("thread pins", () => {
  const thread = (
    id: number,
    anchor: Review["threads"][number]["anchor"],
    resolved = false,
    removed = false,
  ): Review["threads"][number] => ({
    id,
    anchor,
    anchorLabel: "",
    body: "",
    author: "bob",
    version: 1,
    resolved,
    outdated: false,
    removed,
    changes: [],
    lastPosition: null,
    suggestion: null,
    appliedVersion: null,
    comments: [],
    created: "",
  });
  it("counts the unresolved threads per node: a region at its operation, an edge at its head", () => {
    const pins = threadPins({
      threads: [
        thread(1, { node: "op1" }),
        thread(2, { region: { operation: "op1", start: [0], end: [2] } }),
        thread(3, { edge: { from: "t1", to: "op2" } }),
        thread(4, { node: "op2" }, true),
        thread(5, { node: "gone" }, false, true),
        thread(6, { axis: "B" }),
      ],
    });
    expect([...pins]).toEqual([
      ["op1", 2],
      ["op2", 1],
    ]);
    expect(threadPins(null).size).toBe(0);
  });
});
