// Plans that explain themselves (issue 35): the operations a plan's mapping leaves whole, and why,
// by name, output and scope — never by id.

import { showBytes, type Collective } from "./costs";
import { nodeName, type Issue, type LoomDocument, type LoomNode } from "./document";
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
  if (!node || !doc) return "an operation no longer in the graph";
  return nodeTitle(node, (tid) => doc.nodes.find((n) => n.id === tid));
}

/** A node's scope (its ``Group`` tag) without the outer slashes: "layers.0/attn", or "". */
export function scopeOf(node: LoomNode): string {
  const scope = (node.tags?.[GROUP_TAG] as { scope?: unknown } | undefined)?.scope;
  return typeof scope === "string" ? scope.replace(/^\/+|\/+$/g, "") : "";
}

/** ``node`` as people read it, looking its outputs up with ``find`` (a map's ``get`` keeps a long
 * list linear): an operation's name, what it writes and its scope ("op:dot → up in
 * layers.0/attn"); any other node's name and scope. */
export function nodeTitle(node: LoomNode, find: (id: string) => LoomNode | undefined): string {
  const outputs = Object.values(
    (node.body?.outputs ?? {}) as Record<string, { tensorId?: string }[]>,
  )
    .flat()
    .map((o) => (o?.tensorId ? find(o.tensorId) : undefined))
    .filter((n): n is LoomNode => n !== undefined)
    .map(nodeName);
  const where = scopeOf(node);
  return `${nodeName(node)}${outputs.length ? ` → ${outputs.join(", ")}` : ""}${where ? ` in ${where}` : ""}`;
}

/** What a plan's card says of the operations its mapping leaves whole: "op:layer_norm → ln1 runs
 * whole: it contracts or reduces …", and, given the plan's collectives, what that forces. */
export function notSplitLines(
  doc: LoomDocument | null,
  plan: Plan,
  collectives: readonly Collective[] = [],
): string[] {
  const entries = (plan.applications?.notSplit ?? []) as NotSplit[];
  return entries.map((e) => {
    const forced = forcedBy(e.operation, collectives);
    return `${operationTitle(doc, e.operation)} runs whole: ${e.reason}${forced ? `; ${forced}` : ""}`;
  });
}

/** The constraint name of the Issues panel's information entries about the current plan. */
export const PLAN_RUNS_WHOLE = "PlanRunsWhole";

/** What running ``op`` whole forces, from the plan's collectives (issue 35): the moves into it
 * and out of it by kind, with their bytes — "forces 8 all-gathers of 1 MiB before it and 1
 * reduce-scatter of 4 KiB after it"; "" when it forces none. */
export function forcedBy(op: string, collectives: readonly Collective[]): string {
  const said = (side: "consumer" | "producer", where: string): string[] => {
    const kinds = new Map<string, { n: number; bytes: number }>();
    for (const c of collectives) {
      if (c[side] !== op) continue;
      const k = kinds.get(c.kind) ?? { n: 0, bytes: 0 };
      kinds.set(c.kind, { n: k.n + 1, bytes: k.bytes + c.bytes });
    }
    return [...kinds]
      .sort((a, b) => b[1].bytes - a[1].bytes || a[0].localeCompare(b[0]))
      .map(
        ([kind, k]) => `${k.n} ${kind}${k.n === 1 ? "" : "s"} of ${showBytes(k.bytes)} ${where}`,
      );
  };
  const parts = [...said("consumer", "before it"), ...said("producer", "after it")];
  return parts.length ? `forces ${parts.join(" and ")}` : "";
}

/**
 * The Issues panel's information entries for the plan the document is on (issue 35): one per
 * operation its mapping leaves whole, "plan "tp": op:layer_norm → ln1 in layers.0/ln runs whole:
 * it contracts or reduces "D" …; forces 8 all-gathers of 1 MiB before it" — by name, output and
 * scope, never by id (the id is only the entry's jump target). None without a plan.
 */
export function planWhyIssues(
  doc: LoomDocument | null,
  plan: Plan | null,
  collectives: readonly Collective[],
): Issue[] {
  if (!plan) return [];
  const entries = (plan.applications?.notSplit ?? []) as NotSplit[];
  const lines = notSplitLines(doc, plan, collectives);
  return entries.map((e, at) => ({
    constraint: PLAN_RUNS_WHOLE,
    type: "PlanNote",
    severity: "info" as const,
    summary: `plan "${plan.name}" runs an operation whole`,
    message: `plan "${plan.name}": ${lines[at]}`,
    nodeIds: [e.operation],
  }));
}
