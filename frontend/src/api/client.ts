// The editor's REST client (DESIGN.md §6, /api/v1/): openapi-fetch over the types that
// openapi-typescript generates from the server's OpenAPI document (frontend/generated/
// api-schema.d.ts from openapi.json, `make api-client`; `make frontend-check` fails when they
// are stale). A path, its parameters and its body are checked against the server's schemas at
// compile time; every call carries the session's CSRF token and cookie, and every failure throws
// one ApiError whose message is the server's sentence from its {"error": {"code", "message",
// ...}} envelope.

import createClient, { type Client } from "openapi-fetch";
import type { components, paths } from "../../generated/api-schema";

/** The server's schemas by name (``Schemas["PlanOut"]``), as its OpenAPI document states them. */
export type Schemas = components["schemas"];

/** The typed client: ``api.GET("/api/v1/graphs/{graph_id}", { params: { path: { graph_id } } })``. */
export type Api = Client<paths>;

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

/** The ApiError for a response that is not 2xx: the envelope's message and code when it has
 * them, else the status ("the server answered 502 Bad Gateway"). */
export async function refusal(response: Response): Promise<ApiError> {
  let json: unknown = null;
  try {
    json = await response.json();
  } catch {
    /* no JSON body */
  }
  const error = (json as { error?: Record<string, unknown> } | null)?.error ?? {};
  const message =
    typeof error.message === "string"
      ? error.message
      : `the server answered ${response.status} ${response.statusText}`;
  return new ApiError(
    message,
    typeof error.code === "string" ? error.code : String(response.status),
    response.status,
    error,
  );
}

/** Where the API is: the page's own origin (the schema's paths start with /api/v1), or a
 * placeholder where there is no page (the unit tests, which read only the path). */
function pageOrigin(): string {
  return typeof location !== "undefined" && location.origin && location.origin !== "null"
    ? location.origin
    : "http://localhost";
}

/** The typed client with the session's ``csrf`` token. ``fetch`` is looked up at each call (so
 * a test may replace it); one that throws becomes ApiError "unreachable", a non-2xx answer the
 * server's refusal, so a call that returns has the success body (undefined for 204). */
export function createApi(csrf: string, origin: string = pageOrigin()): Api {
  return createClient<paths>({
    baseUrl: origin,
    credentials: "same-origin",
    headers: { "X-CSRFToken": csrf, Accept: "application/json" },
    fetch: async (request: Request) => {
      let response: Response;
      try {
        response = await globalThis.fetch(request);
      } catch {
        throw new ApiError("the server could not be reached; try again", "unreachable");
      }
      if (!response.ok) throw await refusal(response);
      return response;
    },
  });
}

/** The body a call answered (a refusal has thrown already): ``await answer(api.GET(...))``. */
export async function answer<T>(call: Promise<{ data?: T; response: Response }>): Promise<T> {
  return (await call).data as T;
}

/** The fields ``T`` cannot do without. */
type Required<T> = { [K in keyof T]-?: object extends Pick<T, K> ? never : K }[keyof T];

/** ``T`` when the schema's answer ``D`` has every field ``T`` requires (or is left open, a
 * ``dict`` on the server); else a type no caller accepts, naming the missing fields. */
type Read<T, D> = string extends keyof D
  ? T
  : [Exclude<Required<T>, keyof D>] extends [never]
    ? T
    : { notInTheServersSchema: Exclude<Required<T>, keyof D> };

/** The body a call answered, read as the editor's own type ``T`` where the server's schema leaves
 * parts open (a document, a mesh, a plan's spec are ``{[key]: unknown}`` there): every field
 * ``T`` requires must be one the schema answers. ``await answerAs<Plan>()(api.GET(...))``. */
export function answerAs<T>(): <D>(
  call: Promise<{ data?: D; response: Response }>,
) => Promise<Read<T, NonNullable<D>>> {
  return async (call) => (await call).data as never;
}

/** An editor value (a LoomDocument, a spec) as an open JSON object, which fits any object the
 * schema leaves open (``{[key]: unknown}``) and only those. */
export function json(value: object): Record<string, never> {
  return value as Record<string, never>;
}

/** A group of REST calls over one typed client (the pages' *Api classes extend it). */
export class RestClient {
  protected readonly api: Api;

  constructor(csrf: string, origin?: string) {
    this.api = createApi(csrf, origin);
  }
}

/** The REST calls of one graph: ``graph`` is the ``{graph_id}`` path parameter its paths share. */
export class GraphRestClient extends RestClient {
  constructor(
    csrf: string,
    protected readonly graphId: string,
    origin?: string,
  ) {
    super(csrf, origin);
  }

  protected get graph(): { graph_id: string } {
    return { graph_id: this.graphId };
  }
}
