import { describe, expect, it } from "vitest";
import type { Collective } from "./costs";
import { OPERATION, TENSOR, type LoomDocument } from "./document";
import { forcedBy, notSplitLines, PLAN_RUNS_WHOLE, planWhyIssues } from "./planWhy";
import type { Plan } from "./plans";

// given a layer_norm in layers.0/ln writing ln1, left whole by a plan that maps D to tp
const doc: LoomDocument = {
  id: "g",
  nodes: [
    {
      id: "ln",
      type: OPERATION,
      label: "op:layer_norm",
      body: { kernel: "op:layer_norm", outputs: { result: [{ tensorId: "t" }] } },
      tags: { "urn:geon:2026-11:tag_types.jsd#/tags/Group": { scope: "/layers.0/ln" } },
    },
    { id: "t", type: TENSOR, label: "ln1", body: {} },
  ],
};
const plan: Plan = {
  id: 1,
  name: "tp",
  mesh: { name: "m", axes: { tp: 8 } },
  spec: {},
  applications: {
    notSplit: [{ operation: "ln", axes: ["D"], reason: 'it contracts or reduces "D"' }],
  },
};
const move = (kind: string, producer: string, consumer: string, bytes: number): Collective => ({
  kind,
  tensor: "x",
  producer,
  consumer,
  tensorLabel: "x",
  producerLabel: producer,
  consumerLabel: consumer,
  meshAxes: ["tp"],
  devices: 8,
  bytes,
  seconds: 1e-6,
});

describe("what running an operation whole forces (issue 35)", () => {
  it.each([
    ["nothing moves", [], ""],
    [
      "gathers before it",
      [move("all-gather", "up", "ln", 2 ** 19), move("all-gather", "q", "ln", 2 ** 19)],
      "forces 2 all-gathers of 1 MiB before it",
    ],
    [
      "moves before and after it, the larger first, others' moves not counted",
      [
        move("permute", "a", "ln", 64),
        move("all-reduce", "b", "ln", 4096),
        move("reduce-scatter", "ln", "c", 1024),
        move("all-gather", "a", "other", 9999),
      ],
      "forces 1 all-reduce of 4 KiB before it and 1 permute of 64 B before it and 1 reduce-scatter of 1 KiB after it",
    ],
  ])("%s", (_label, collectives, expected) => {
    expect(forcedBy("ln", collectives)).toBe(expected);
  });
});

describe("the Issues panel's information entries for the current plan (issue 35)", () => {
  it("names the operation by name, output and scope with the reason and what it forces, never the id", () => {
    // when the plan's cost gathers ln's input over the 8 devices
    const [entry, ...rest] = planWhyIssues(doc, plan, [move("all-gather", "up", "ln", 2 ** 20)]);
    // then one information entry, jumping to the operation
    expect(rest).toEqual([]);
    expect(entry).toEqual({
      constraint: PLAN_RUNS_WHOLE,
      type: "PlanNote",
      severity: "info",
      summary: 'plan "tp" runs an operation whole',
      message:
        'plan "tp": op:layer_norm → ln1 in layers.0/ln runs whole: it contracts or reduces "D"; forces 1 all-gather of 1 MiB before it',
      nodeIds: ["ln"],
    });
    expect(entry!.message).not.toContain('"ln"');
  });
  it("says nothing without a plan or when the plan leaves nothing whole", () => {
    expect(planWhyIssues(doc, null, [])).toEqual([]);
    expect(planWhyIssues(doc, { ...plan, applications: {} }, [])).toEqual([]);
  });
});

describe("the plan's card (issue 35)", () => {
  it("says what running an operation whole forces once the plan's collectives are known", () => {
    expect(notSplitLines(doc, plan)).toEqual([
      'op:layer_norm → ln1 in layers.0/ln runs whole: it contracts or reduces "D"',
    ]);
    expect(notSplitLines(doc, plan, [move("all-gather", "up", "ln", 1536)])).toEqual([
      'op:layer_norm → ln1 in layers.0/ln runs whole: it contracts or reduces "D"; forces 1 all-gather of 1.5 KiB before it',
    ]);
  });
});
