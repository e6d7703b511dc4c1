import { describe, expect, it } from "vitest";
import { stepFromUrl } from "./lesson";

describe("stepFromUrl", () => {
  it("reads the step the link names, within the lesson", () => {
    expect(stepFromUrl("?lesson=dot&step=3", 4)).toBe(3);
    expect(stepFromUrl("?lesson=dot&step=9", 4)).toBe(1);
    expect(stepFromUrl("?lesson=dot&step=two", 4)).toBe(1);
    expect(stepFromUrl("?lesson=dot", 4)).toBe(1);
  });
});
