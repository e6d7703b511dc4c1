import { describe, expect, it } from "vitest";
import { ApiError } from "../api/client";
import { importTitle, parseImport } from "./page";

describe("import", () => {
  it.each([
    ["model.json", "model"],
    ["C:\\graphs\\Mlp.JSON", "Mlp"],
    [".json", "Imported graph"],
  ])("%s is titled %s", (name, title) => {
    expect(importTitle(name)).toBe(title);
  });

  it("reads a LoomGraph document", () => {
    expect(parseImport("g.json", '{"id": "g", "nodes": []}')).toEqual({ id: "g", nodes: [] });
  });

  it.each([
    ["not JSON", "{", '"g.json" is not JSON; expected a LoomGraph document {"id", "nodes": [...]}'],
    [
      "a list",
      "[]",
      '"g.json" is not a LoomGraph document; expected an object with "id" (a string) and "nodes" (a list)',
    ],
    [
      "no nodes",
      '{"id": "g"}',
      '"g.json" is not a LoomGraph document; expected an object with "id" (a string) and "nodes" (a list)',
    ],
  ])("refuses %s", (_label, text, message) => {
    expect(() => parseImport("g.json", text)).toThrow(new ApiError(message));
  });
});

describe("the graph list's search", async () => {
  const { matches } = await import("./page");
  it("matches every word, in any case, anywhere in the title or description", () => {
    expect(matches("mlp two", "Two-layer MLP: x · w1")).toBe(true);
    expect(matches("  ", "anything")).toBe(true);
    expect(matches("conv", "Two-layer MLP")).toBe(false);
  });
});
