import { afterEach, describe, expect, it, vi } from "vitest";
import { ImportsApi } from "../gallery/modelImport";
import { answer, ApiError, createApi } from "./client";
import { GraphsApi } from "./graphs";
import { PlansApi } from "./plans";

interface Sent {
  url: string;
  method: string;
  headers: Record<string, string>;
  credentials: RequestCredentials;
  body: string;
}

/** A fetch answering ``responses`` in turn, keeping what each request sent. */
function server(...responses: Response[]): Sent[] {
  const sent: Sent[] = [];
  vi.stubGlobal("fetch", async (request: Request) => {
    const headers = Object.fromEntries(request.headers.entries());
    sent.push({
      url: request.url,
      method: request.method,
      headers,
      credentials: request.credentials,
      body: await request.text(),
    });
    return responses.shift()!;
  });
  return sent;
}

const json = (status: number, body: unknown) =>
  new Response(JSON.stringify(body), { status, headers: { "Content-Type": "application/json" } });

afterEach(() => {
  vi.unstubAllGlobals();
  vi.useRealTimers();
});

describe("the typed REST client", () => {
  it("sends the session's CSRF token and cookie, the path's parameters encoded and the body as JSON", async () => {
    // given a client on an origin
    const sent = server(json(200, { id: "a b", title: "T", version: 3 }));
    // when a graph is patched
    const api = createApi("tok", "http://geon.test");
    const got = await answer(
      api.PATCH("/api/v1/graphs/{graph_id}", {
        params: { path: { graph_id: "a b" } },
        body: { baseVersion: 2, title: "T" },
      }),
    );
    // then the request is the server's route with the token, and the answer is the body
    expect(got).toEqual({ id: "a b", title: "T", version: 3 });
    expect(sent).toEqual([
      {
        url: "http://geon.test/api/v1/graphs/a%20b",
        method: "PATCH",
        headers: {
          accept: "application/json",
          "content-type": "application/json",
          "x-csrftoken": "tok",
        },
        credentials: "same-origin",
        body: '{"baseVersion":2,"title":"T"}',
      },
    ]);
  });

  it("turns the server's envelope into an ApiError with its sentence, code, status and details", async () => {
    server(
      json(409, {
        error: { code: "stale_version", message: 'graph "Mlp" is at version 4, not 2', version: 4 },
      }),
    );
    const refusal = await new GraphsApi("tok").get("g").catch((e: unknown) => e);
    expect(refusal).toBeInstanceOf(ApiError);
    const { message, code, status, details } = refusal as ApiError;
    expect({ message, code, status, details }).toEqual({
      message: 'graph "Mlp" is at version 4, not 2',
      code: "stale_version",
      status: 409,
      details: { code: "stale_version", message: 'graph "Mlp" is at version 4, not 2', version: 4 },
    });
  });

  it("names the status when the answer has no envelope", async () => {
    server(new Response("<html>oops</html>", { status: 502, statusText: "Bad Gateway" }));
    const refusal = (await new GraphsApi("tok").get("g").catch((e: unknown) => e)) as ApiError;
    expect([refusal.message, refusal.code, refusal.status]).toEqual([
      "the server answered 502 Bad Gateway",
      "502",
      502,
    ]);
  });

  it("says the server could not be reached when fetch fails", async () => {
    vi.stubGlobal("fetch", () => Promise.reject(new TypeError("Failed to fetch")));
    const refusal = (await new GraphsApi("tok").get("g").catch((e: unknown) => e)) as ApiError;
    expect([refusal.message, refusal.code]).toEqual([
      "the server could not be reached; try again",
      "unreachable",
    ]);
  });

  it("answers undefined for 204 No Content", async () => {
    const sent = server(new Response(null, { status: 204 }));
    expect(await new PlansApi("tok", "g").remove(7)).toBeUndefined();
    expect(sent.map((s) => [s.method, new URL(s.url).pathname])).toEqual([
      ["DELETE", "/api/v1/graphs/g/plans/7"],
    ]);
  });

  it("imports with the title in the query, or none to take the document's own", async () => {
    const sent = server(
      json(201, { id: "n", title: "Mlp", version: 1 }),
      json(201, { id: "m", title: "About's", version: 1 }),
    );
    const api = new GraphsApi("tok");
    await api.import("Mlp & co", { id: "d", nodes: [] });
    await api.import(null, { id: "d", nodes: [] });
    expect(sent.map((s) => [new URL(s.url).pathname + new URL(s.url).search, s.body])).toEqual([
      ["/api/v1/graphs/import?title=Mlp%20%26%20co", '{"id":"d","nodes":[]}'],
      ["/api/v1/graphs/import", '{"id":"d","nodes":[]}'],
    ]);
  });

  it("uploads a model as a multipart form, with the boundary in its content type", async () => {
    const sent = server(
      json(202, {
        id: 4,
        name: "m.onnx",
        status: "queued",
        step: "",
        error: "",
        graph: null,
        weights: null,
      }),
    );
    const job = await new ImportsApi("tok").start(
      new File([new Uint8Array([8, 1])], "m.onnx"),
      "batch=8",
    );
    expect(job.status).toBe("queued");
    const [upload] = sent;
    expect([
      new URL(upload!.url).pathname,
      upload!.headers["content-type"]!.split(";")[0],
      upload!.body.includes('name="dims"\r\n\r\nbatch=8'),
    ]).toEqual(["/api/v1/imports", "multipart/form-data", true]);
  });
});

describe("a cost a worker computes", () => {
  it("is asked again every second, the server's words told meanwhile, until it answers", async () => {
    // given a cost queued twice, then answered
    const queued = {
      status: "queued",
      message: "the plan's cost is past what the web process computes at once",
      location: "/api/v1/graphs/g/plans/7/cost?profile=cpu-host",
      work: 9,
    };
    const sent = server(
      json(202, queued),
      json(202, queued),
      json(200, { version: 3, devices: [], transfers: [], transferBytes: 0 }),
    );
    vi.useFakeTimers();
    // when its cost is asked
    const told: string[] = [];
    const cost = new PlansApi("csrf", "g").cost(7, "cpu-host", (m) => told.push(m));
    await vi.runAllTimersAsync();
    // then the answer comes after the location was asked three times
    expect((await cost).version).toBe(3);
    expect(told).toEqual([queued.message, queued.message]);
    expect(sent.map((s) => new URL(s.url).pathname + new URL(s.url).search)).toEqual(
      Array(3).fill(queued.location),
    );
  });
});

describe("a plan's pipeline over PATCH", () => {
  it("sends the pipeline given, null to remove it, and nothing of it when it is left out", async () => {
    // given a plans client and a server answering each patch with the plan
    const answered = {
      id: 7,
      name: "pp",
      mesh: { axes: { pp: 2 } },
      spec: {},
      axisMapping: {},
      inputs: {},
      pipeline: null,
    };
    const sent = server(json(200, answered), json(200, answered), json(200, answered));
    const plansApi = new PlansApi("tok", "g1", "http://geon.test");
    const pipeline = {
      axis: "pp",
      microbatches: 4,
      schedule: "1f1b" as const,
      stages: [["layers.0"], ["layers.1"]],
    };
    // when its pipeline is set, removed, and the plan renamed alone
    await plansApi.update(7, { pipeline });
    await plansApi.update(7, { pipeline: null });
    await plansApi.update(7, { name: "renamed" });
    // then each PATCH body carries exactly that
    expect(sent.map((s) => [s.method, s.url, JSON.parse(s.body)])).toEqual([
      ["PATCH", "http://geon.test/api/v1/graphs/g1/plans/7", { pipeline }],
      ["PATCH", "http://geon.test/api/v1/graphs/g1/plans/7", { pipeline: null }],
      ["PATCH", "http://geon.test/api/v1/graphs/g1/plans/7", { name: "renamed" }],
    ]);
  });
});
