import { describe, expect, it } from "vitest";
import { TENSOR, type LoomDocument } from "../model/document";
import { Controller, type ControllerHooks } from "./controller";

const DOC: LoomDocument = {
  id: "g",
  nodes: [{ id: "x", type: TENSOR, label: "x", body: { dtype: "float32" } }],
};
const snapshot = {
  type: "snapshot" as const,
  document: DOC,
  version: 3,
  issues: [],
  issueCounts: { error: 0, warning: 0 },
  present: [],
  role: "editor" as const,
};

/** A controller that never connects (the receive side is driven by hand), and what it told the editor. */
function started(): { c: Controller; flashes: string[] } {
  const flashes: string[] = [];
  const hooks: ControllerHooks = {
    changed: () => {},
    ticked: () => {},
    flash: (m) => flashes.push(m),
    plansChanged: () => {},
    selection: () => [],
  };
  const c = new Controller(hooks, false);
  c.receive(snapshot);
  return { c, flashes };
}

const rename = (label: string) => [{ op: "update_node" as const, id: "x", label }];
const labels = (c: Controller) => c.session.document!.nodes.map((n) => n.label);

describe("Controller", () => {
  it("does not show the warnings a puzzle asks for (issue 36), and shows its errors and other warnings", () => {
    const { c } = started();
    const issue = (constraint: string, severity: "error" | "warning") => ({
      constraint,
      type: "t",
      severity,
      summary: "s",
      message: "m",
      nodeIds: ["x"],
    });
    const issues = [
      issue("AccidentalBroadcast", "warning"),
      issue("AccidentalBroadcast", "error"),
      issue("OperationAxesInference", "warning"),
    ];
    c.receive({ ...snapshot, issues, issueCounts: { error: 1, warning: 2 } });
    expect(c.state().issueCounts).toEqual({ error: 1, warning: 2 });
    c.quiet = new Set(["AccidentalBroadcast"]);
    expect(c.issues().map((i) => [i.constraint, i.severity])).toEqual([
      ["AccidentalBroadcast", "error"],
      ["OperationAxesInference", "warning"],
    ]);
    expect(c.state().issueCounts).toEqual({ error: 1, warning: 1 });
  });

  it("shows a committed action at once and records it as one undo step", () => {
    const { c } = started();
    c.commit("rename x", rename("x2"));
    expect([labels(c), c.state().unsaved, c.history.names()]).toEqual([
      ["x2"],
      1,
      { undo: ["rename x"], redo: [] },
    ]);
  });

  it("drops a refused edit, forgets it in the history and names it", () => {
    const { c, flashes } = started();
    c.commit("rename x", rename("x2"));
    const id = c.session.next()!.id;
    c.receive({
      type: "rejected",
      id,
      reason: "conflict",
      message: "someone renamed it",
      version: 3,
    });
    expect([labels(c), c.history.names().undo, flashes]).toEqual([
      ["x"],
      [],
      ['your edit "rename x" was dropped: the server refused it: someone renamed it'],
    ]);
  });

  it("keeps an edit the server cannot take now, and says when it is sent again", () => {
    const { c, flashes } = started();
    c.commit("rename x", rename("x2"));
    const id = c.session.next()!.id;
    c.receive({
      type: "rejected",
      id,
      reason: "unavailable",
      message: "the database is busy",
      version: 3,
    });
    expect([labels(c), c.state().unsaved]).toEqual([["x2"], 1]);
    expect(flashes[0]).toMatch(
      /^the database is busy; your edit is kept and is sent again in \d+ s$/,
    );
  });

  it("refuses undo to a read-only role, saying why", () => {
    const { c, flashes } = started();
    c.commit("rename x", rename("x2"));
    c.receive({ type: "access", role: "viewer" });
    c.undo();
    expect([labels(c), flashes]).toEqual([
      ["x2"],
      ["you are a viewer on this graph, so edits are refused; an owner can make you an editor"],
    ]);
  });

  it("follows the newest run, from the REST answer and the websocket alike", () => {
    const { c } = started();
    const run = {
      id: 2,
      graphId: "g",
      version: 3,
      backend: "numpy",
      sharded: false,
      plan: null,
      seed: null,
      uploadedInputs: false,
      status: "queued" as const,
      progress: 0,
      step: null,
      created: "",
      started: null,
      finished: null,
      timings: {},
      result: {},
      max_abs_diff: null,
      results: null,
      error: "",
      workerPid: null,
    };
    c.runQueued(run);
    c.receive({ type: "run", event: "done", run: { ...run, status: "done", progress: 1 } });
    expect([c.state().run?.status, c.state().runStatuses]).toEqual(["done", ["queued", "done"]]);
  });

  it("hands the plan cost an applied carries to the editor once, after the document moved to it", () => {
    const costs: [number, (string | undefined)[]][] = [];
    let c: Controller | null = null;
    const hooks: ControllerHooks = {
      changed: () => {},
      ticked: () => {},
      flash: () => {},
      plansChanged: () => {},
      selection: () => [],
      planCost: (cost) => costs.push([cost.version, labels(c!)]),
    };
    c = new Controller(hooks, false);
    c.receive(snapshot);
    const collective = {
      kind: "all-reduce",
      tensor: "x",
      producer: "p",
      consumer: "q",
      tensorLabel: "x",
      producerLabel: "p",
      consumerLabel: "q",
      meshAxes: ["tp"],
      devices: 2,
      bytes: 512,
      seconds: 1e-6,
    };
    const planCost = {
      planId: 1,
      plan: "Megatron",
      version: 4,
      collectives: { "cpu-host": [collective] },
    };
    const applied = {
      type: "applied" as const,
      id: null,
      version: 4,
      ops: rename("y"),
      issues: [],
      issueCounts: { error: 0, warning: 0 },
      author: "bob",
      planCost,
    };
    c.receive(applied);
    // the same message again (an older version now) changes nothing and is not handed on
    c.receive(applied);
    c.receive({ ...applied, version: 5, ops: rename("z"), planCost: undefined });
    expect(costs).toEqual([[4, ["y"]]]);
  });

  it("does not offer to undo an expanded edit the server says is too large to undo, and says why", () => {
    const flashes: string[] = [];
    const hooks: ControllerHooks = {
      changed: () => {},
      ticked: () => {},
      flash: (m) => flashes.push(m),
      plansChanged: () => {},
      selection: () => [],
    };
    const c = new Controller(hooks, false);
    c.receive(snapshot);
    // (an open line, as the plan switch needs one; nothing is sent on it here)
    (c as unknown as { socket: unknown }).socket = { isOpen: true, send: () => {} };
    const id = c.expectExpanded("plan", "switch to plan rows")!;
    const add = (n: number) => ({
      op: "add_node" as const,
      node: { id: `a${n}`, type: TENSOR, label: `a${n}`, body: { dtype: "float32" } },
    });
    const counts = { error: 0, warning: 0 };
    c.receive({
      type: "applied",
      id,
      version: 4,
      ops: [add(1), add(2), add(3)],
      issues: [],
      issueCounts: counts,
      author: "ann",
      undoable: false,
    });
    expect([c.history.names(), flashes]).toEqual([
      { undo: [], redo: [] },
      [
        '"switch to plan rows" cannot be undone here: its 3 changes are more than one edit may make',
      ],
    ]);
    // without the server's word, the same edit is one undo step
    const again = c.expectExpanded("plan", "switch to plan cols")!;
    c.receive({
      type: "applied",
      id: again,
      version: 5,
      ops: [add(4)],
      issues: [],
      issueCounts: counts,
      author: "ann",
    });
    expect(c.history.names().undo).toEqual(["switch to plan cols"]);
  });
});
