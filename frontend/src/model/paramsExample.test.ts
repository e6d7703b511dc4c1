import { describe, expect, it } from "vitest";
import { declareAxis } from "./authorAxes";
import { addTensor } from "./authorTensors";
import { addOperation, connectInput } from "./authorOperations";
import { inferOperation } from "./derive";
import { nodeById, type LoomDocument } from "./document";
import { applyOps, type EditOp } from "./edits";
import { paramsExample, paramsPlaceholder } from "./paramsExample";

const run = (doc: LoomDocument, ops: EditOp[]): LoomDocument => applyOps(doc, ops);

/** x[H, W-1] read by an operation of ``kernel`` whose params are the example: it infers clean. */
function inferWithExample(
  kernel: string,
  given?: null,
): { example: unknown; kind: string; message?: string } {
  let doc: LoomDocument = { id: "g", nodes: [] };
  for (const [name, length] of [
    ["H", 2],
    ["W", 3],
  ] as const)
    doc = run(doc, declareAxis(doc, { name, length }));
  const t = addTensor(doc, { label: "x", axes: ["H", "W-1"], at: { x: 0, y: 0 } });
  doc = run(doc, t.ops);
  const op = addOperation(doc, kernel, { x: 200, y: 0 });
  doc = run(doc, op.ops);
  doc = run(doc, connectInput(doc, t.id, op.id));
  const before = inferOperation(doc, nodeById(doc).get(op.id)!);
  const example =
    given === null
      ? null
      : paramsExample(kernel, ["H", "W-1"], before.kind === "ok" ? before.result : null);
  doc = run(doc, [{ op: "update_node", id: op.id, body: { params: example } }]);
  const inf = inferOperation(doc, nodeById(doc).get(op.id)!);
  return { example, kind: inf.kind, message: inf.kind === "error" ? inf.message : undefined };
}

describe("paramsExample (issue 36)", () => {
  it('gives op:sum over (H, W-1) {"reduction_axes": ["W-1"]}, as the issue asks', () => {
    expect(paramsExample("op:sum", ["H", "W-1"], null)).toEqual({ reduction_axes: ["W-1"] });
    expect(paramsExample("op:sum", [], null)).toEqual({ reduction_axes: ["W-1"] });
  });

  it.each([
    "op:sum",
    "op:max",
    "op:mean",
    "op:softmax",
    "op:add",
    "op:multiply",
    "op:cast_axes",
    "op:dimshuffle",
  ])("the example for %s infers without an error", (kernel) => {
    const { example, kind, message } = inferWithExample(kernel);
    expect(example).not.toBeNull();
    expect([kind, message]).toEqual(["ok", undefined]);
  });

  it("says a kernel takes no params where its params would be refused", () => {
    expect(paramsPlaceholder("op:sum", ["H", "W-1"], null)).toBe('e.g. {"reduction_axes":["W-1"]}');
    for (const kernel of ["op:dot", "op:exp", "op:relu", "op:transpose"])
      expect(paramsPlaceholder(kernel, ["H"], null)).toBe("no params needed");
    expect(paramsExample("op:slice", ["H"], null)).toBeNull();
  });

  it.each(["op:exp", "op:relu", "op:transpose"])(
    "%s with no params infers without an error",
    (kernel) => {
      expect(inferWithExample(kernel, null)).toMatchObject({ kind: "ok" });
    },
  );
});
