import { describe, expect, it } from "vitest";
import { APPLICATION, OPERATION, type LoomDocument, type LoomNode } from "../model/document";
import { applyOps, type EditOp } from "../model/edits";
import { Session } from "../sync/session";
import { ExpandedEdits } from "./expanded";
import { History } from "./history";

const app = (id: string, start: number, end: number): LoomNode => ({
  id,
  type: APPLICATION,
  body: {
    operationId: "op",
    outputs: { result: [{ tensorId: "y", range: { start: [start], end: [end] } }] },
  },
});

const DOC: LoomDocument = {
  id: "g",
  nodes: [{ id: "op", type: OPERATION, body: { kernel: "op:relu" } }, app("whole", 0, 4)],
};

/** What the server's ``applied`` carries for "shard op into 2": the old application out, two in. */
const SHARD_OPS: EditOp[] = [
  { op: "remove_node", id: "whole" },
  { op: "add_node", node: app("a0", 0, 2) },
  { op: "add_node", node: app("a1", 2, 4) },
];

const ids = (doc: LoomDocument | null) => doc!.nodes.map((n) => n.id);

/** A client that sent a shard, as the editor wires it: session, history and the waiting list. */
function sharded() {
  const session = new Session("me");
  session.snapshot(DOC, 1, [], []);
  const history = new History();
  const expanded = new ExpandedEdits();
  expanded.expect("shard-1-1", "shard");
  const applied = {
    type: "applied" as const,
    id: "shard-1-1",
    version: 2,
    ops: SHARD_OPS,
    issues: [],
  };
  const entry = expanded.applied(applied, session.confirmed);
  session.applied(applied);
  if (entry) history.record(entry);
  return { session, history, expanded };
}

describe("a shard is an undo step once the server has expanded it", () => {
  it("records the expanded ops and the inverse that restores the previous applications", () => {
    const { session, history, expanded } = sharded();
    expect(ids(session.document)).toEqual(["op", "a0", "a1"]);
    expect([history.names(), expanded.pending]).toEqual([{ undo: ["shard"], redo: [] }, 0]);

    // when the user undoes it, the inverse (sent as a normal edit) brings the old application back
    const entry = history.undo()!;
    session.edit(entry.inverse);
    expect(ids(session.document)).toEqual(["op", "whole"]);
    expect(session.document!.nodes[1]).toEqual(app("whole", 0, 4));

    // and redo sends the expanded ops again: the same two applications
    const again = history.redo()!;
    expect(again.ops).toBe(SHARD_OPS);
    expect(ids(applyOps(session.document!, again.ops))).toEqual(["op", "a0", "a1"]);
  });

  it("never records someone else's edit, nor one from the REST API", () => {
    const expanded = new ExpandedEdits();
    expanded.expect("shard-1-1", "shard");
    expect(expanded.applied({ id: "theirs-1", ops: SHARD_OPS }, DOC)).toBeNull();
    expect(expanded.applied({ id: null, ops: SHARD_OPS }, DOC)).toBeNull();
    expect(expanded.pending).toBe(1);
  });

  it("stops waiting for a refused shard and records nothing", () => {
    const expanded = new ExpandedEdits();
    expanded.expect("shard-1-1", "shard");
    expanded.refused("shard-1-1");
    expect(expanded.applied({ id: "shard-1-1", ops: SHARD_OPS }, DOC)).toBeNull();
    expect(expanded.pending).toBe(0);
  });

  it("records nothing when the expanded ops do not apply to the confirmed document", () => {
    const expanded = new ExpandedEdits();
    expanded.expect("shard-1-1", "shard");
    const stale: EditOp[] = [{ op: "remove_node", id: "gone" }];
    expect(expanded.applied({ id: "shard-1-1", ops: stale }, DOC)).toBeNull();
  });

  it("forgets what it waited for after a new snapshot", () => {
    const expanded = new ExpandedEdits();
    expanded.expect("shard-1-1", "shard");
    expanded.clear();
    expect(expanded.applied({ id: "shard-1-1", ops: SHARD_OPS }, DOC)).toBeNull();
  });
});
