// Plans that explain themselves (issue 35): the operations a plan's mapping leaves whole, and why,
// by name, output and scope — never by id.

import { nodeName, type LoomDocument, type LoomNode } from "./document";
import type { Plan } from "./plans";

/** The tag that keeps a node's name scope (render/groups.ts's GROUP; a model layer does not import render). */
const GROUP_TAG = "urn:geon:2026-11:tag_types.jsd#/tags/Group";

/** One operation a plan's mapping left whole, and why (the server's ``notSplit``). */
export interface NotSplit {
  operation: string;
  axes: string[];
  reason: string;
}

/** An operation as people read it (issue 35): its name, what it writes and its scope, never its
 * id — "op:layer_norm → ln1 in layers.0/ln"; an operation the document no longer holds: "an
 * operation no longer in the graph". */
export function operationTitle(doc: LoomDocument | null, id: string): string {
  const node = doc?.nodes.find((n) => n.id === id);
  if (!node) return "an operation no longer in the graph";
  const outputs = Object.values((node.body?.outputs ?? {}) as Record<string, { tensorId?: string }[]>)
    .flat()
    .map((o) => doc!.nodes.find((n) => n.id === o?.tensorId))
    .filter((n): n is LoomNode => n !== undefined)
    .map(nodeName);
  const scope = (node.tags?.[GROUP_TAG] as { scope?: unknown } | undefined)?.scope;
  const where = typeof scope === "string" && scope.replace(/^\/+|\/+$/g, "") ? ` in ${scope.replace(/^\/+|\/+$/g, "")}` : "";
  return `${nodeName(node)}${outputs.length ? ` → ${outputs.join(", ")}` : ""}${where}`;
}

/** What a plan's card says of the operations its mapping leaves whole: "runs whole: op:layer_norm → ln1 — it contracts or reduces …". */
export function notSplitLines(doc: LoomDocument | null, plan: Plan): string[] {
  const entries = (plan.applications?.notSplit ?? []) as NotSplit[];
  return entries.map((e) => `${operationTitle(doc, e.operation)} runs whole: ${e.reason}`);
}
