import { describe, expect, it } from "vitest";
import type { Issue } from "../model/document";
import { issueFix, issuesShown } from "./issuesPanel";

describe("issuesShown", () => {
  it.each([
    ["every issue listed", 3, { error: 2, warning: 1 }, ""],
    [
      "the list cut by the server",
      200,
      { error: 5_000, warning: 312 },
      "showing 200 of 5,312 issues",
    ],
  ])("%s", (_label, listed, counts, expected) => {
    expect(issuesShown(listed, counts)).toBe(expected);
  });
});

describe("issueFix", () => {
  const warning: Issue = {
    constraint: "AccidentalBroadcast",
    type: "LikelySameAxis",
    severity: "warning",
    summary: "Two axes that likely mean the same are broadcast",
    message: "cast C2 to C1 with cast_axes before the op:add, or declare them one axis",
    nodeIds: ["op"],
    params: {
      operationId: "op",
      operand: "tensors",
      position: 1,
      tensorId: "b",
      fromAxis: "C2",
      toAxis: "C1",
      fix: "cast_axes",
    },
  };

  it("offers Insert cast_axes on an AccidentalBroadcast warning, naming the axes", () => {
    expect(issueFix(warning)).toEqual({
      label: "Insert cast_axes",
      title: "relabel C2 as C1 before the operation (one undo step)",
    });
  });

  it("offers nothing on other issues or without an axis to cast to", () => {
    expect(issueFix({ ...warning, constraint: "OperationAxesInference" })).toBeNull();
    expect(issueFix({ ...warning, params: { ...warning.params, toAxis: null } })).toBeNull();
  });
});
