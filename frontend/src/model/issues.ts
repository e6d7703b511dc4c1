// What the editor derives from the checker's issues (DESIGN.md §5): the axis errors it predicts
// for operations the server has not re-checked yet (while this user's edits are in flight), and
// the axis references each issue outlines on the canvas.

import { inferOperation } from "./derive";
// why the current plan runs operations whole: the Issues panel's information entries (issue 35)
export { planWhyIssues } from "./planWhy";
import {
  issueAxes,
  nodeById,
  nodeName,
  OPERATION,
  selections,
  type Issue,
  type LoomDocument,
  type LoomNode,
} from "./document";

/**
 * The axis errors ``OperationAxesInference`` will report for operations of ``doc`` that the
 * server's ``issues`` do not flag yet: what the editor shows before the server's answer.
 */
export function predictIssues(doc: LoomDocument, issues: readonly Issue[]): Issue[] {
  const flagged = new Set(
    issues.filter((i) => i.constraint === "OperationAxesInference").flatMap((i) => i.nodeIds),
  );
  const predicted: Issue[] = [];
  for (const n of doc.nodes) {
    if (n.type !== OPERATION || flagged.has(n.id)) continue;
    const inf = inferOperation(doc, n);
    if (inf.kind === "error" && inf.type === "AxisError") {
      predicted.push({
        constraint: "OperationAxesInference",
        type: inf.type,
        severity: "error",
        summary: "predicted by the editor",
        message: inf.message,
        nodeIds: [n.id],
      });
    }
  }
  return predicted;
}

/** Axis references to outline per node: what an issue names, on the node and on an operation's inputs. */
export function issueAxesByNode(
  doc: LoomDocument,
  issues: readonly Issue[],
): Map<string, Set<string>> {
  const nodes = nodeById(doc);
  const out = new Map<string, Set<string>>();
  const add = (id: string, refs: string[]) => {
    const set = out.get(id) ?? new Set<string>();
    refs.forEach((r) => set.add(r));
    out.set(id, set);
  };
  for (const issue of issues) {
    const refs = issueAxes(issue);
    if (!refs.length) continue;
    for (const id of issue.nodeIds) {
      add(id, refs);
      const n = nodes.get(id);
      if (n?.type === OPERATION)
        for (const list of selections(n.body.inputs).values())
          for (const s of list) add(s.tensorId, refs);
    }
  }
  return out;
}

/** The axis names some issue refers to (offsets dropped: "W-1" is about "W"). */
export function axesWithIssues(issues: readonly Issue[]): Set<string> {
  return new Set(issues.flatMap((i) => issueAxes(i)).map((r) => r.replace(/[+-]\d+$/, "")));
}

/**
 * ``message`` as a person reads it (issue 21: names, never ids): each quoted node id becomes the
 * node's name (``nodeName``); an unlabelled operation's ``"<id>" (op:dot)`` becomes ``"op:dot"``.
 * The checker's messages keep ids, which tools match on; this is how the editor shows them.
 */
export function namedMessage(message: string, nodes: ReadonlyMap<string, LoomNode>): string {
  return message.replace(
    /"([^"\s]{1,80})"( \(([^()\s]{1,80})\))?/g,
    (whole, id: string, after: string | undefined, kernel: string | undefined) => {
      const node = nodes.get(id);
      if (!node) return whole;
      const name = nodeName(node);
      return name === kernel ? `"${name}"` : `"${name}"${after ?? ""}`;
    },
  );
}
