import { afterEach, describe, expect, it, vi } from "vitest";
import { runEngines, runForm, startRun } from "./runs";

describe("runForm", () => {
  it.each([
    [
      "the toolbar's logical run",
      { sharded: false },
      [
        ["backend", "numpy"],
        ["sharded", "false"],
      ],
    ],
    [
      "a sharded run with a seed",
      { sharded: true, seed: "7" },
      [
        ["backend", "numpy"],
        ["sharded", "true"],
        ["seed", "7"],
      ],
    ],
    [
      "a run on the JAX engine",
      { sharded: false, engine: "jax" as const },
      [
        ["backend", "numpy"],
        ["sharded", "false"],
        ["engine", "jax"],
      ],
    ],
  ])("%s", (_label, request, expected) => {
    expect([...runForm(request).entries()]).toEqual(expected);
  });
});

describe("startRun", () => {
  afterEach(() => vi.unstubAllGlobals());
  const answer = (status: number, body: unknown) =>
    vi.stubGlobal(
      "fetch",
      vi.fn(async () => ({ ok: status < 400, status, json: async () => body })),
    );

  it("posts to the REST endpoint and gives the queued run", async () => {
    answer(202, { id: 4, status: "queued" });
    expect(await startRun("g1", "t", { sharded: false })).toEqual({
      run: { id: 4, status: "queued" },
    });
    const [url, init] = (fetch as unknown as ReturnType<typeof vi.fn>).mock.calls[0]!;
    expect([url, init.method, init.headers]).toEqual([
      "/api/v1/graphs/g1/runs",
      "POST",
      { "X-CSRFToken": "t" },
    ]);
  });

  it.each([
    [
      "the server's message",
      413,
      { error: { code: "too_large", message: "the run is too large" } },
      "the run is too large",
    ],
    ["the status when there is none", 500, {}, "the server answered 500"],
  ])("a refusal gives %s", async (_label, status, body, expected) => {
    answer(status, body);
    expect(await startRun("g1", "t", { sharded: false })).toEqual({ error: expected });
  });

  it("says when the server cannot be reached", async () => {
    vi.stubGlobal(
      "fetch",
      vi.fn(async () => Promise.reject(new TypeError("offline"))),
    );
    expect(await startRun("g1", "t", { sharded: false })).toEqual({
      error: "the server could not be reached; try again",
    });
  });
});

describe("runEngines", () => {
  afterEach(() => vi.unstubAllGlobals());
  const answer = (status: number, body: unknown) =>
    vi.stubGlobal(
      "fetch",
      vi.fn(async () => ({ ok: status < 400, status, json: async () => body })),
    );

  it("gives the server's engines and says nothing", async () => {
    answer(200, { engines: ["numpy", "jax"] });
    const said = vi.fn();
    expect(await runEngines(said)).toEqual(["numpy", "jax"]);
    expect(said).not.toHaveBeenCalled();
  });

  it.each([
    [
      "the server's message",
      503,
      { error: { message: "the worker is down" } },
      "Runs offer NumPy only: the engines could not be read (the worker is down).",
    ],
    [
      "the status when there is none",
      500,
      {},
      "Runs offer NumPy only: the engines could not be read (the server answered 500).",
    ],
  ])("falls back to NumPy, once, with %s", async (_label, status, body, expected) => {
    answer(status, body);
    const said = vi.fn();
    expect(await runEngines(said)).toEqual(["numpy"]);
    expect(said.mock.calls).toEqual([[expected]]);
  });

  it("says when the server cannot be reached", async () => {
    vi.stubGlobal(
      "fetch",
      vi.fn(async () => Promise.reject(new TypeError("offline"))),
    );
    const said = vi.fn();
    expect(await runEngines(said)).toEqual(["numpy"]);
    expect(said.mock.calls).toEqual([
      ["Runs offer NumPy only: the server could not be reached for the engines (offline)."],
    ]);
  });
});
