// Starting a run: one REST call (``POST /api/v1/graphs/<id>/runs``, DESIGN.md §6) for the run
// panel's form and the toolbar's Run button alike. The run's progress then arrives as ``run``
// messages on the websocket (sync/protocol.ts).

import type { RunInfo } from "./protocol";

export interface RunRequest {
  sharded: boolean;
  /** A whole number as the user typed it; absent: the server's default seed. */
  seed?: string;
  /** An ``.npz`` of inputs keyed by tensor label. */
  inputs?: File;
  /** Keep and return every tensor, not only the outputs. */
  intermediates?: boolean;
  /** ``jax``: the placed plan on JAX beside the logical run (docs/engines.md); absent: NumPy. */
  engine?: "numpy" | "jax";
}

/** The queued run, or why it was not queued (the server's message, or that it could not be reached). */
export type RunAnswer = { run: RunInfo } | { error: string };

/** The form the endpoint takes (multipart, so that an upload can ride along). */
export function runForm(request: RunRequest): FormData {
  const body = new FormData();
  body.append("backend", "numpy");
  body.append("sharded", request.sharded ? "true" : "false");
  if (request.engine === "jax") body.append("engine", "jax");
  if (request.seed !== undefined) body.append("seed", request.seed);
  if (request.inputs) body.append("inputs", request.inputs);
  if (request.intermediates) body.append("intermediates", "true");
  return body;
}

/** The engines a run may ask for (``GET /api/v1/engines``): NumPy always, JAX where installed.
 * When the server cannot be asked or answers no list, NumPy alone, and ``fallback`` is told why
 * (once per call: the panel says it on its status line, no toast). */
export async function runEngines(fallback?: (why: string) => void): Promise<string[]> {
  const numpyOnly = (why: string): string[] => {
    fallback?.(`Runs offer NumPy only: ${why}.`);
    return ["numpy"];
  };
  try {
    const response = await fetch("/api/v1/engines", { credentials: "same-origin" });
    const body = (await response.json().catch(() => null)) as {
      engines?: unknown;
      error?: { message?: unknown };
    } | null;
    if (response.ok && Array.isArray(body?.engines))
      return body.engines.filter((e): e is string => typeof e === "string");
    const said = body?.error?.message;
    return numpyOnly(
      `the engines could not be read (${typeof said === "string" && said ? said : `the server answered ${response.status}`})`,
    );
  } catch (e) {
    return numpyOnly(`the server could not be reached for the engines (${(e as Error).message})`);
  }
}

/** ``geon verify``'s answer: the report, or the location a worker's answer will be at, or why not. */
export type VerifyAnswer = { report: VerifyReport } | { pending: string } | { error: string };

/** One side of a verify report (docs/engines.md): a predicted or compiled collective and its rule. */
export interface VerifyEntry {
  kind: string;
  bytesPerDevice: number;
  rule: string;
  match: number | null;
  meshAxes?: string[];
  groups?: number;
  devices?: number;
  combined?: number;
  tensorLabel?: string;
  producerLabel?: string;
  consumerLabel?: string;
}

export interface VerifyReport {
  agrees: boolean;
  unexplained: number;
  devices: number;
  compileSeconds: number;
  predicted: VerifyEntry[];
  compiled: VerifyEntry[];
}

/** Ask for (``POST``) or poll (``GET`` the location) the verify of the graph's placed plan. */
export async function verifyPlan(url: string, csrf: string | null): Promise<VerifyAnswer> {
  try {
    const init: RequestInit =
      csrf === null
        ? { credentials: "same-origin" }
        : { method: "POST", headers: { "X-CSRFToken": csrf }, credentials: "same-origin" };
    const response = await fetch(url, init);
    const body = (await response.json()) as Partial<VerifyReport> & {
      location?: string;
      error?: { message: string };
    };
    if (response.status === 200 && Array.isArray(body.predicted))
      return { report: body as VerifyReport };
    if (response.status === 202 && typeof body.location === "string")
      return { pending: body.location };
    return { error: body.error?.message ?? `the server answered ${response.status}` };
  } catch {
    return { error: "the server could not be reached; try again" };
  }
}

export async function startRun(
  graphId: string,
  csrf: string,
  request: RunRequest,
): Promise<RunAnswer> {
  try {
    const response = await fetch(`/api/v1/graphs/${graphId}/runs`, {
      method: "POST",
      headers: { "X-CSRFToken": csrf },
      body: runForm(request),
      credentials: "same-origin",
    });
    const answer = (await response.json()) as Partial<RunInfo> & { error?: { message: string } };
    if (response.ok && typeof answer.id === "number") return { run: answer as RunInfo };
    return { error: answer.error?.message ?? `the server answered ${response.status}` };
  } catch {
    return { error: "the server could not be reached; try again" };
  }
}
