// A graph's shard plans (``/api/v1/graphs/<id>/plans``): list, create, rename, delete, generate,
// and the costs and diffs a worker may compute (answered 202 and polled).

import type { PlanPipeline } from "../model/pipelines";
import type { InputLayout, Mesh, Plan, PlanCost, SpecEntry } from "../model/plans";
import type { PlanDiff } from "../ui/planDiff";
import { answer, answerAs, ApiError, json, GraphRestClient, type Schemas } from "./client";

/** Seconds a polled cost or diff is waited for before the editor says it gave up. */
export const POLL_LIMIT = 600;

type Queued = Schemas["CostPending"];

// the server's schemas leave a plan's mesh, spec and mapping open; the editor reads them as its own
const plan = answerAs<Plan>();
const plans = answerAs<{ plans: Plan[] }>();
const generated = answerAs<{ version: number; plan: Plan }>();

export class PlansApi extends GraphRestClient {
  async list(): Promise<Plan[]> {
    return (
      await plans(this.api.GET("/api/v1/graphs/{graph_id}/plans", { params: { path: this.graph } }))
    ).plans;
  }

  /** A new plan: per-operation ``spec`` entries, and/or an ``axisMapping`` (axis -> mesh axis)
   * that applies to every operation with the axis; ``pipeline``: its stages (issue 33). */
  create(
    name: string,
    mesh: Mesh,
    spec: Record<string, SpecEntry>,
    axisMapping: Record<string, string> = {},
    inputs: Record<string, InputLayout> = {},
    pipeline?: PlanPipeline,
  ): Promise<Plan> {
    return plan(
      this.api.POST("/api/v1/graphs/{graph_id}/plans", {
        params: { path: this.graph },
        body: {
          name,
          mesh,
          spec: json(spec),
          axisMapping,
          inputs: json(inputs),
          ...(pipeline ? { pipeline: json(pipeline) } : {}),
        },
      }),
    );
  }

  /** Change a plan; a field left out keeps its value. */
  /** Change the fields given; ``pipeline``: its stages, or ``null`` to remove them (issue 33). */
  update(
    id: number,
    patch: {
      name?: string;
      mesh?: Mesh;
      spec?: Record<string, SpecEntry>;
      axisMapping?: Record<string, string>;
      inputs?: Record<string, InputLayout>;
      pipeline?: PlanPipeline | null;
    },
  ): Promise<Plan> {
    const { spec, inputs, pipeline, ...rest } = patch;
    const body = {
      ...rest,
      ...(spec ? { spec: json(spec) } : {}),
      ...(inputs ? { inputs: json(inputs) } : {}),
      ...(pipeline !== undefined ? { pipeline: pipeline === null ? null : json(pipeline) } : {}),
    };
    return plan(
      this.api.PATCH("/api/v1/graphs/{graph_id}/plans/{plan_id}", {
        params: { path: { ...this.graph, plan_id: id } },
        body,
      }),
    );
  }

  remove(id: number): Promise<void> {
    return answer(
      this.api.DELETE("/api/v1/graphs/{graph_id}/plans/{plan_id}", {
        params: { path: { ...this.graph, plan_id: id } },
      }),
    );
  }

  /** Write the plan into the document (its Mesh, its Applications placed on the mesh; operations
   * it does not name run whole) as one edit on ``baseVersion``, whose websocket ``applied``
   * carries ``editId``. */
  generate(
    id: number,
    baseVersion: number,
    editId: string,
  ): Promise<{ version: number; plan: Plan }> {
    return generated(
      this.api.POST("/api/v1/graphs/{graph_id}/plans/{plan_id}/generate", {
        params: { path: { ...this.graph, plan_id: id } },
        body: { baseVersion, editId },
      }),
    );
  }

  /** What the plan costs on the graph's current version (nothing is stored), under the shipped
   * hardware ``profile`` (the server's default when not given); a plan past the web process's
   * budget is costed by a worker, and ``onWait`` hears the server's words while it is. */
  cost(id: number, profile?: string, onWait?: (message: string) => void): Promise<PlanCost> {
    return this.polled<PlanCost>(
      () =>
        this.api.GET("/api/v1/graphs/{graph_id}/plans/{plan_id}/cost", {
          params: { path: { ...this.graph, plan_id: id }, query: { profile } },
        }),
      onWait,
    );
  }

  /** What the current document costs as it is placed (``GET /graphs/<id>/cost``), saved plan or
   * not: a suggestion applied or a split made by hand keeps a cost (issue 35); polled as a cost is. */
  documentCost(profile?: string, onWait?: (message: string) => void): Promise<PlanCost> {
    return this.polled<PlanCost>(
      () =>
        this.api.GET("/api/v1/graphs/{graph_id}/cost", {
          params: { path: this.graph, query: { profile } },
        }),
      onWait,
    );
  }

  /** The current document as placed against plan ``plan`` (``GET /graphs/<id>/cost/diff/<plan>``),
   * the document ``before`` or ``after`` it; polled as a cost is. */
  documentDiff(
    plan: number,
    current: "before" | "after",
    profile?: string,
    onWait?: (message: string) => void,
  ): Promise<PlanDiff> {
    return this.polled<PlanDiff>(
      () =>
        this.api.GET("/api/v1/graphs/{graph_id}/cost/diff/{plan_id}", {
          params: { path: { ...this.graph, plan_id: plan }, query: { current, profile } },
        }),
      onWait,
    );
  }

  /** Plan ``a`` against plan ``b`` on the current version (``GET .../plans/<a>/diff/<b>``),
   * polled as a cost is. */
  diff(
    a: number,
    b: number,
    profile?: string,
    onWait?: (message: string) => void,
  ): Promise<PlanDiff> {
    return this.polled<PlanDiff>(
      () =>
        this.api.GET("/api/v1/graphs/{graph_id}/plans/{base}/diff/{target}", {
          params: { path: { ...this.graph, base: a, target: b }, query: { profile } },
        }),
      onWait,
    );
  }

  /** A GET the server may answer 202 ``{"status": "queued", "message", "location"}`` while a
   * worker computes it: asked again every second (for at most {@link POLL_LIMIT} tries) until it
   * answers. The location the server names is the request itself (geon/graphs/services/
   * plan_jobs.py), so the typed call is repeated rather than the location read as a string. */
  private async polled<T>(
    ask: () => Promise<{ data?: unknown; response: Response }>,
    onWait?: (message: string) => void,
  ): Promise<T> {
    for (let tries = 0; ; tries++) {
      const got = await answer(ask());
      const queued = got as Queued | null | undefined;
      if (!queued || queued.status !== "queued" || typeof queued.location !== "string")
        return got as T;
      if (tries >= POLL_LIMIT)
        throw new ApiError(
          `${queued.message} (still not answered after ${POLL_LIMIT} s; ask again later)`,
          "timeout",
        );
      onWait?.(queued.message);
      await new Promise((done) => setTimeout(done, 1000));
    }
  }

  /** The shipped hardware profiles' names and the default one (``GET /profiles``). */
  async profiles(): Promise<{ default: string; names: string[] }> {
    const got = (await answer(this.api.GET("/api/v1/profiles"))) as {
      default: string;
      profiles: { name: string }[];
    };
    return { default: got.default, names: got.profiles.map((p) => p.name) };
  }
}
