import { describe, expect, it } from "vitest";
import { declareAxis } from "./authorAxes";
import { addTensor } from "./authorTensors";
import { addOperation, connectInput } from "./authorOperations";
import { TENSOR_AXES, type Issue, type LoomDocument } from "./document";
import { applyOps } from "./edits";
import { axesWithIssues, issueAxesByNode, predictIssues } from "./issues";

/** x[H] and y[W] fed to one dot, then y's axes changed to [H] without re-deriving it (as an edit in flight leaves it): "H" is in both operands at one level, an AxisError. */
function mismatched(): { doc: LoomDocument; op: string; x: string; y: string } {
  let doc: LoomDocument = { id: "g", nodes: [] };
  for (const [name, length] of [
    ["H", 2],
    ["W", 3],
  ] as const)
    doc = applyOps(doc, declareAxis(doc, { name, length }));
  const x = addTensor(doc, { label: "x", axes: ["H"], at: { x: 0, y: 0 } });
  doc = applyOps(doc, x.ops);
  const y = addTensor(doc, { label: "y", axes: ["W"], at: { x: 0, y: 100 } });
  doc = applyOps(doc, y.ops);
  const op = addOperation(doc, "op:dot", { x: 300, y: 0 });
  doc = applyOps(doc, op.ops);
  doc = applyOps(doc, connectInput(doc, x.id, op.id));
  doc = applyOps(doc, connectInput(doc, y.id, op.id));
  doc = applyOps(doc, [{ op: "update_node", id: y.id, tags: { [TENSOR_AXES]: { axes: ["H"] } } }]);
  return { doc, op: op.id, x: x.id, y: y.id };
}

const issue = (constraint: string, nodeIds: string[], message = ""): Issue => ({
  constraint,
  type: "T",
  severity: "error",
  summary: "",
  message,
  nodeIds,
});

describe("predictIssues", () => {
  it("predicts the axis error of an operation the server has not flagged", () => {
    const { doc, op } = mismatched();
    expect(predictIssues(doc, []).map((i) => [i.constraint, i.type, i.summary, i.nodeIds])).toEqual(
      [["OperationAxesInference", "AxisError", "predicted by the editor", [op]]],
    );
  });

  it("adds nothing for an operation the server flagged already", () => {
    const { doc, op } = mismatched();
    expect(predictIssues(doc, [issue("OperationAxesInference", [op])])).toEqual([]);
  });
});

describe("axesWithIssues", () => {
  it("names the axes the messages quote, offsets dropped", () => {
    expect([...axesWithIssues([issue("C", [], 'axis "W-1" does not match "H"')])]).toEqual([
      "W",
      "H",
    ]);
  });
});

describe("issueAxesByNode", () => {
  it("outlines the named axes on the operation and on its inputs", () => {
    const { doc, op, x, y } = mismatched();
    const got = issueAxesByNode(doc, [issue("C", [op], 'axis "H" appears in both operands')]);
    expect([...got].map(([id, refs]) => [id, [...refs]])).toEqual([
      [op, ["H"]],
      [x, ["H"]],
      [y, ["H"]],
    ]);
  });

  it("is empty when no issue names an axis", () => {
    const { doc, op } = mismatched();
    expect(issueAxesByNode(doc, [issue("C", [op], "no axis here")]).size).toBe(0);
  });
});

describe("namedMessage", async () => {
  const { namedMessage } = await import("./issues");
  const node = (id: string, extra: object) =>
    ({ id, type: "t", body: {}, tags: {}, ...extra }) as never;
  const nodes = new Map([
    [
      "6e729955-6da3-4a84-97ce-ddf00ec63f77",
      node("6e729955-6da3-4a84-97ce-ddf00ec63f77", { body: { kernel: "op:dot" } }),
    ],
    ["f074beee", node("f074beee", { label: "x·w1", body: { kernel: "op:dot" } })],
    ["t1", node("t1", { label: "x" })],
  ]);

  it("names an unlabelled operation by its kernel, once", () => {
    expect(
      namedMessage(
        'operation "6e729955-6da3-4a84-97ce-ddf00ec63f77" (op:dot): axis "W" appears in both operands',
        nodes,
      ),
    ).toBe('operation "op:dot": axis "W" appears in both operands');
  });

  it("names labelled nodes by their label and leaves other quotes alone", () => {
    expect(
      namedMessage('operation "f074beee" (op:dot) selects "[0:2]" of tensor "t1"', nodes),
    ).toBe('operation "x·w1" (op:dot) selects "[0:2]" of tensor "x"');
    expect(namedMessage('axis "W" is unknown', nodes)).toBe('axis "W" is unknown');
  });
});
