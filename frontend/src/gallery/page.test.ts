import { describe, expect, it, vi } from "vitest";
import { ApiError, importTitle, parseImport } from "./api";

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
    ["a list", "[]", '"g.json" is not a LoomGraph document; expected an object with "id" (a string) and "nodes" (a list)'],
    ["no nodes", '{"id": "g"}', '"g.json" is not a LoomGraph document; expected an object with "id" (a string) and "nodes" (a list)'],
  ])("refuses %s", (_label, text, message) => {
    expect(() => parseImport("g.json", text)).toThrow(new ApiError(message));
  });
});

describe("the graph list's search", async () => {
  const { matches } = await import("./api");
  it("matches every word, in any case, anywhere in the title or description", () => {
    expect(matches("mlp two", "Two-layer MLP: x · w1")).toBe(true);
    expect(matches("  ", "anything")).toBe(true);
    expect(matches("conv", "Two-layer MLP")).toBe(false);
  });
});

describe("a cost a worker computes", () => {
  it("is polled at its location, the server's words told meanwhile, until it answers", async () => {
    const { PlansApi } = await import("./api");
    const queued = { status: "queued", message: "the plan's cost is past what the web process computes at once", location: "/api/v1/graphs/g/plans/7/cost?profile=cpu-host" };
    const answers = [
      new Response(JSON.stringify(queued), { status: 202 }),
      new Response(JSON.stringify(queued), { status: 202 }),
      new Response(JSON.stringify({ version: 3, devices: [], transfers: [], transferBytes: 0 }), { status: 200 }),
    ];
    const asked: string[] = [];
    vi.stubGlobal("fetch", (url: string) => {
      asked.push(url);
      return Promise.resolve(answers.shift());
    });
    vi.useFakeTimers();
    try {
      const told: string[] = [];
      const cost = new PlansApi("/api/v1", "csrf", "g").cost(7, "cpu-host", (m) => told.push(m));
      await vi.runAllTimersAsync();
      expect((await cost).version).toBe(3);
      expect(told).toEqual([queued.message, queued.message]);
      expect(asked).toEqual(Array(3).fill("/api/v1/graphs/g/plans/7/cost?profile=cpu-host"));
    } finally {
      vi.useRealTimers();
      vi.unstubAllGlobals();
    }
  });
});
