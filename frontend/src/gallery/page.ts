// The REST calls of the graph list (DESIGN.md §6, /api/v1/): create, rename, duplicate, delete,
// import and export. Every failure becomes one sentence for the page, from the server's
// {"error": {"code", "message"}} when there is one.

import type { PlanDiff } from "../ui/planDiff";
import type { LoomDocument } from "../model/document";
import type { InputLayout, Mesh, Plan, PlanCost, SpecEntry } from "../model/plans";

export interface GraphInfo {
  id: string;
  title: string;
  version: number;
  document?: LoomDocument;
}

/** A refusal of the API, or the server out of reach: the server's sentence, its ``code``
 * ("unreachable" when it could not be reached), the HTTP status and the rest of its error JSON. */
export class ApiError extends Error {
  constructor(
    message: string,
    readonly code: string = "error",
    readonly status: number = 0,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

export function emptyDocument(): LoomDocument {
  return { id: crypto.randomUUID ? crypto.randomUUID() : `${Date.now()}`, nodes: [] };
}

/** A title for an imported file: its name without the extension. */
export function importTitle(filename: string): string {
  const base = filename.replace(/^.*[\\/]/, "").replace(/\.json$/i, "").trim();
  return base || "Imported graph";
}

/** The top-level tag of an exported document with the graph's title and description. */
export const ABOUT_TAG = "urn:geon:2026-11:tag_types.jsd#/tags/About";

/** The title an exported document carries in its About tag, or null when it has none. */
export function aboutTitle(doc: LoomDocument): string | null {
  const tags = (doc as { tags?: unknown }).tags;
  const about = tags && typeof tags === "object" ? (tags as Record<string, unknown>)[ABOUT_TAG] : undefined;
  const title = about && typeof about === "object" ? (about as { title?: unknown }).title : undefined;
  return typeof title === "string" && title.trim() ? title : null;
}

/** Parse an import file; refuses anything that is not a LoomGraph document, saying why. */
export function parseImport(filename: string, text: string): LoomDocument {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new ApiError(`"${filename}" is not JSON; expected a LoomGraph document {"id", "nodes": [...]}`);
  }
  const doc = value as Partial<LoomDocument> | null;
  if (!doc || typeof doc !== "object" || Array.isArray(doc) || typeof doc.id !== "string" || !Array.isArray(doc.nodes)) {
    throw new ApiError(`"${filename}" is not a LoomGraph document; expected an object with "id" (a string) and "nodes" (a list)`);
  }
  return doc as LoomDocument;
}

/** JSON (or a multipart form) over fetch with the session's CSRF token; a failure throws an ApiError with the server's message. */
export class RestClient {
  constructor(
    protected readonly base: string,
    private readonly csrf: string,
  ) {}

  protected async call<T>(method: string, path: string, body?: unknown): Promise<T> {
    let response: Response;
    try {
      // a form (a file upload) goes as multipart, with the boundary the browser picks
      const form = typeof FormData !== "undefined" && body instanceof FormData;
      response = await fetch(`${this.base}${path}`, {
        method,
        headers: { ...(form ? {} : { "Content-Type": "application/json" }), "X-CSRFToken": this.csrf, Accept: "application/json" },
        body: body === undefined ? undefined : form ? body : JSON.stringify(body),
        credentials: "same-origin",
      });
    } catch {
      throw new ApiError("the server could not be reached; try again", "unreachable");
    }
    if (response.status === 204) return undefined as T;
    let json: unknown = null;
    try {
      json = await response.json();
    } catch {
      /* no JSON body */
    }
    if (!response.ok) {
      const error = (json as { error?: Record<string, unknown> } | null)?.error ?? {};
      const message = typeof error.message === "string" ? error.message : `the server answered ${response.status} ${response.statusText}`;
      throw new ApiError(message, typeof error.code === "string" ? error.code : String(response.status), response.status, error);
    }
    return json as T;
  }
}

export class GraphsApi extends RestClient {
  create(title: string, document: LoomDocument): Promise<GraphInfo> {
    return this.call("POST", "/graphs", { title, document });
  }

  get(id: string): Promise<GraphInfo> {
    return this.call("GET", `/graphs/${id}`);
  }

  /** Rename at the current version (a stale version is refused by the server with 409). */
  async rename(id: string, title: string): Promise<GraphInfo> {
    const g = await this.get(id);
    return this.call("PATCH", `/graphs/${id}`, { baseVersion: g.version, title });
  }

  /** Store a LoomGraph document as it is, as a new graph; with no ``title``, the server takes
   * the one in the document's About tag (as exported). */
  import(title: string | null, document: LoomDocument): Promise<GraphInfo> {
    const query = title === null ? "" : `?title=${encodeURIComponent(title)}`;
    return this.call("POST", `/graphs/import${query}`, document);
  }

  exportUrl(id: string): string {
    return `${this.base}/graphs/${id}/export`;
  }

  remove(id: string): Promise<void> {
    return this.call("DELETE", `/graphs/${id}`);
  }

  /** A copy of yours titled "<title> (copy)", with the document and the description. */
  duplicate(id: string): Promise<GraphInfo> {
    return this.call("POST", `/graphs/${id}/duplicate`);
  }
}

/** A cost or diff a worker computes (202): the server's words and where to ask again. */
interface Queued {
  status: string;
  message: string;
  location: string;
}

/** Seconds a polled cost or diff is waited for before the editor says it gave up. */
export const POLL_LIMIT = 600;

/** A graph's shard plans (``/graphs/<id>/plans``): list, create, rename, delete and cost. */
export class PlansApi extends RestClient {
  constructor(
    base: string,
    csrf: string,
    private readonly graphId: string,
  ) {
    super(base, csrf);
  }

  private get path(): string {
    return `/graphs/${this.graphId}/plans`;
  }

  async list(): Promise<Plan[]> {
    return (await this.call<{ plans: Plan[] }>("GET", this.path)).plans;
  }

  /** A new plan: per-operation ``spec`` entries, and/or an ``axisMapping`` (axis -> mesh axis)
   * that applies to every operation with the axis. */
  create(name: string, mesh: Mesh, spec: Record<string, SpecEntry>, axisMapping: Record<string, string> = {}, inputs: Record<string, InputLayout> = {}): Promise<Plan> {
    return this.call("POST", this.path, { name, mesh, spec, axisMapping, inputs });
  }

  /** Change a plan; a field left out keeps its value. */
  update(id: number, patch: { name?: string; mesh?: Mesh; spec?: Record<string, SpecEntry>; axisMapping?: Record<string, string>; inputs?: Record<string, InputLayout> }): Promise<Plan> {
    return this.call("PATCH", `${this.path}/${id}`, patch);
  }

  remove(id: number): Promise<void> {
    return this.call("DELETE", `${this.path}/${id}`);
  }

  /** Write the plan into the document (its Mesh, its Applications placed on the mesh; operations
   * it does not name run whole) as one edit on ``baseVersion``, whose websocket ``applied``
   * carries ``editId``. */
  generate(id: number, baseVersion: number, editId: string): Promise<{ version: number; plan: Plan }> {
    return this.call("POST", `${this.path}/${id}/generate`, { baseVersion, editId });
  }

  /** What the plan costs on the graph's current version (nothing is stored), under the shipped
   * hardware ``profile`` (the server's default when not given); a plan past the web process's
   * budget is costed by a worker, and ``onWait`` hears the server's words while it is. */
  cost(id: number, profile?: string, onWait?: (message: string) => void): Promise<PlanCost> {
    const query = profile ? `?profile=${encodeURIComponent(profile)}` : "";
    return this.polled(`${this.path}/${id}/cost${query}`, onWait);
  }

  /** What the current document costs as it is placed (``GET /graphs/<id>/cost``), saved plan or
   * not: a suggestion applied or a split made by hand keeps a cost (issue 35); polled as a cost is. */
  documentCost(profile?: string, onWait?: (message: string) => void): Promise<PlanCost> {
    const query = profile ? `?profile=${encodeURIComponent(profile)}` : "";
    return this.polled(`/graphs/${this.graphId}/cost${query}`, onWait);
  }

  /** The current document as placed against plan ``plan`` (``GET /graphs/<id>/cost/diff/<plan>``),
   * the document ``before`` or ``after`` it; polled as a cost is. */
  documentDiff(plan: number, current: "before" | "after", profile?: string, onWait?: (message: string) => void): Promise<PlanDiff> {
    const query = `?current=${current}${profile ? `&profile=${encodeURIComponent(profile)}` : ""}`;
    return this.polled(`/graphs/${this.graphId}/cost/diff/${plan}${query}`, onWait);
  }

  /** Plan ``a`` against plan ``b`` on the current version (``GET .../plans/<a>/diff/<b>``),
   * polled as a cost is. */
  diff(a: number, b: number, profile?: string, onWait?: (message: string) => void): Promise<PlanDiff> {
    const query = profile ? `?profile=${encodeURIComponent(profile)}` : "";
    return this.polled(`${this.path}/${a}/diff/${b}${query}`, onWait);
  }

  /** A GET the server may answer 202 ``{"status": "queued", "message", "location"}`` while a
   * worker computes it: the location is asked again every second (for at most
   * {@link POLL_LIMIT} tries) until it answers. */
  private async polled<T>(path: string, onWait?: (message: string) => void): Promise<T> {
    for (let tries = 0; ; tries++) {
      const answer = await this.call<T | Queued>("GET", path);
      const queued = answer as Queued | null;
      if (!queued || queued.status !== "queued" || typeof queued.location !== "string") return answer as T;
      if (tries >= POLL_LIMIT) throw new ApiError(`${queued.message} (still not answered after ${POLL_LIMIT} s; ask again later)`, "timeout");
      onWait?.(queued.message);
      await new Promise((done) => setTimeout(done, 1000));
      if (queued.location.startsWith(`${this.base}/`)) path = queued.location.slice(this.base.length);
    }
  }

  /** The shipped hardware profiles' names and the default one (``GET /profiles``). */
  async profiles(): Promise<{ default: string; names: string[] }> {
    const answer = await this.call<{ default: string; profiles: { name: string }[] }>("GET", "/profiles");
    return { default: answer.default, names: answer.profiles.map((p) => p.name) };
  }
}

/** Whether a graph's row matches the search (every word, in its title or description). */
export function matches(query: string, text: string): boolean {
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  const haystack = text.toLowerCase();
  return words.every((w) => haystack.includes(w));
}
