import { describe, expect, it } from "vitest";
import { issuesShown } from "./panels";

describe("issuesShown", () => {
  it.each([
    ["every issue listed", 3, { error: 2, warning: 1 }, ""],
    ["the list cut by the server", 200, { error: 5_000, warning: 312 }, "showing 200 of 5,312 issues"],
  ])("%s", (_label, listed, counts, expected) => {
    expect(issuesShown(listed, counts)).toBe(expected);
  });
});
