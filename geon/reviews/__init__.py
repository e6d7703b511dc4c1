"""Reviews of shard plans and graphs: threads pinned to what they discuss, suggestions, verdicts
that go stale, guardrails (docs/reviews.md)."""
