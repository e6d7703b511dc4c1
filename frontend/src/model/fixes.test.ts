import { describe, expect, it } from "vitest";
import { AuthorError } from "./author";
import { declareAxis } from "./authorAxes";
import { addTensor } from "./authorTensors";
import { addOperation, connectInput } from "./authorOperations";
import {
  nodeById,
  OPERATION,
  selections,
  tensorAxes,
  type Issue,
  type LoomDocument,
} from "./document";
import { applyOps, invertOps } from "./edits";
import { castAxesFix, castFixOf } from "./fixes";

/** The seed's pitfall: a[C1, N] + b[C2, N] (C1 and C2 both of length 3) gives (C1, N, C2). */
function pitfall(): { doc: LoomDocument; a: string; b: string; add: string } {
  let doc: LoomDocument = { id: "g", nodes: [] };
  for (const [name, length] of [
    ["C1", 3],
    ["C2", 3],
    ["N", 4],
  ] as const)
    doc = applyOps(doc, declareAxis(doc, { name, length }));
  const ta = addTensor(doc, { label: "a", axes: ["C1", "N"], at: { x: 0, y: 0 } });
  doc = applyOps(doc, ta.ops);
  const tb = addTensor(doc, { label: "b", axes: ["C2", "N"], at: { x: 0, y: 200 } });
  doc = applyOps(doc, tb.ops);
  const op = addOperation(doc, "op:add", { x: 300, y: 100 });
  doc = applyOps(doc, op.ops);
  doc = applyOps(doc, connectInput(doc, ta.id, op.id));
  doc = applyOps(doc, connectInput(doc, tb.id, op.id));
  return { doc, a: ta.id, b: tb.id, add: op.id };
}

const resultOf = (doc: LoomDocument, op: string) =>
  nodeById(doc).get(selections(nodeById(doc).get(op)!.body.outputs).get("result")![0]!.tensorId);

/** The warning as the server words it (geon/core/checks/broadcasting.py). */
function warning(add: string, b: string): Issue {
  return {
    constraint: "AccidentalBroadcast",
    type: "LikelySameAxis",
    severity: "warning",
    summary: "Two axes that likely mean the same are broadcast",
    message: "cast C2 to C1 with cast_axes before the op:add, or declare them one axis",
    nodeIds: [add],
    params: {
      operationId: add,
      operand: "tensors",
      position: 1,
      tensorId: b,
      fromAxis: "C2",
      toAxis: "C1",
      fix: "cast_axes",
    },
  };
}

describe("castAxesFix", () => {
  it("inserts a cast_axes relabelling C2 as C1 and the sum becomes elementwise", () => {
    const { doc, b, add } = pitfall();
    expect(tensorAxes(resultOf(doc, add))).toEqual(["C1", "N", "C2"]);
    const { ops, castId, output } = castAxesFix(doc, warning(add, b));
    const fixed = applyOps(doc, ops);
    const nodes = nodeById(fixed);
    const cast = nodes.get(castId)!;
    expect(cast.type).toBe(OPERATION);
    expect(cast.body.kernel).toBe("op:cast_axes");
    expect(cast.body.params).toEqual({ axes: ["C1", "N"] });
    expect(selections(cast.body.inputs).get("tensor")![0]!.tensorId).toBe(b);
    expect(nodes.get(output)!.label).toBe("b as C1");
    expect(tensorAxes(nodes.get(output))).toEqual(["C1", "N"]);
    // the add reads the relabelled tensor and its result loses C2
    expect(
      selections(nodes.get(add)!.body.inputs)
        .get("tensors")!
        .map((s) => s.tensorId),
    ).toContain(output);
    expect(tensorAxes(resultOf(fixed, add))).toEqual(["C1", "N"]);
  });

  it("is one edit: inverting its ops gives the document back (one undo)", () => {
    const { doc, b, add } = pitfall();
    const { ops } = castAxesFix(doc, warning(add, b));
    const undo = invertOps(doc, ops);
    expect(applyOps(applyOps(doc, ops), undo)).toEqual(doc);
  });

  it("refuses a stale issue, naming what changed", () => {
    const { doc, a, add } = pitfall();
    const stale = {
      ...warning(add, a),
      params: { ...warning(add, a).params, position: 1, tensorId: a, fromAxis: "C1", toAxis: "C2" },
    };
    expect(() => castAxesFix(doc, stale)).toThrow(AuthorError);
    expect(() => castAxesFix(doc, stale)).toThrow(/no longer reads "a"/);
    const gone = { ...warning(add, "nope") };
    expect(() => castAxesFix(doc, gone)).toThrow(/operand this issue is about is gone/);
  });

  it("offers no fix for other issues or a warning without an axis to cast to", () => {
    const { b, add } = pitfall();
    expect(castFixOf(warning(add, b))).not.toBeNull();
    expect(castFixOf({ ...warning(add, b), constraint: "OperationAxesInference" })).toBeNull();
    expect(
      castFixOf({
        ...warning(add, b),
        params: { ...warning(add, b).params, fromAxis: null, toAxis: null },
      }),
    ).toBeNull();
  });
});
