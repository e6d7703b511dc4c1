import { describe, expect, it } from "vitest";
import { ABOUT_TAG, aboutTitle } from "./page";
import type { LoomDocument } from "../model/document";

describe("aboutTitle", () => {
  it.each([
    [
      "an export's title",
      { id: "g", nodes: [], tags: { [ABOUT_TAG]: { title: "MLP", description: "" } } },
      "MLP",
    ],
    ["no tags", { id: "g", nodes: [] }, null],
    ["other tags only", { id: "g", nodes: [], tags: { "urn:x": 1 } }, null],
    ["a blank title", { id: "g", nodes: [], tags: { [ABOUT_TAG]: { title: "  " } } }, null],
    [
      "a title that is not a string",
      { id: "g", nodes: [], tags: { [ABOUT_TAG]: { title: 3 } } },
      null,
    ],
  ])("%s", (_label, doc, title) => {
    expect(aboutTitle(doc as LoomDocument)).toBe(title);
  });
});
