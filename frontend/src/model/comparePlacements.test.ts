import { describe, expect, it } from "vitest";
import { compareChoices, CURRENT } from "./comparePicker";
import { describePlacement, type OperationPlacement } from "./comparePlacements";
import { compareRows, type Plan, type PlanCost } from "./plans";

const placement = (
  operation: string,
  split: Record<string, number> = {},
  over: Record<string, string> | null = null,
): OperationPlacement => ({
  operation,
  label: operation,
  split,
  over,
  parts: Object.values(split).reduce((n, k) => n * k, 1),
});

const cost = (
  totals: number[],
  placements?: OperationPlacement[],
  coords = (i: number): number[] => [i],
): PlanCost => ({
  version: 4,
  devices: totals.map((t, i) => ({
    mesh: "m",
    coords: coords(i),
    inputs: t,
    outputs: 0,
    temporaries: 0,
    total: t,
  })),
  transfers: [],
  transferBytes: 0,
  ...(placements ? { placements } : {}),
});

// a plan made by axis mapping: its spec names no operation; the server says what it placed
const mapped: Plan = {
  id: 7,
  name: "heads over tp",
  mesh: { name: "pod", axes: { tp: 2 } },
  spec: {},
  axisMapping: { heads: "tp", ffn: "tp" },
  applications: {
    operations: {},
    notSplit: [{ operation: "norm", axes: ["hidden"], reason: "it contracts or reduces hidden" }],
  },
};
const current: Plan = {
  id: 0,
  name: "current document",
  mesh: { name: "current document", axes: { devices: 1 } },
  spec: { attn: { dim: "heads", parts: 1 }, norm: { dim: "hidden", parts: 1 } },
};

describe("Compare reads each side's split from what it places (issue 35)", () => {
  it("says a mapped plan's operations are split over tp, not whole, and why the others run whole", () => {
    // given a mapped plan whose cost places attn and up over tp and leaves norm whole, and the document unplaced
    const plan = cost(
      [300, 300],
      [
        placement("attn", { heads: 2 }, { heads: "tp" }),
        placement("norm"),
        placement("up", { ffn: 2 }, { ffn: "tp" }),
      ],
    );
    const doc = cost([600], [placement("attn"), placement("norm"), placement("up")], () => []);
    // when the two are compared
    const rows = compareRows(
      null,
      { plan: current, cost: doc },
      { plan: mapped, cost: plan },
    ).filter((r) => r.kind === "operation");
    // then each operation says how each side runs it; a whole one gives the plan's reason, and is not a difference
    expect(rows.map((r) => [r.label, r.a, r.b, r.differs])).toEqual([
      ["attn", "whole", "heads over tp (2)", true],
      ["norm", "whole", "whole (it contracts or reduces hidden)", false],
      ["up", "whole", "ffn over tp (2)", true],
    ]);
  });

  it("falls back to the spec for a cost without placements", () => {
    const rows = compareRows(
      null,
      { plan: current, cost: cost([600]) },
      {
        plan: { ...current, id: 3, spec: { attn: { dim: "heads", parts: 2 } } },
        cost: cost([300, 300]),
      },
    );
    expect(rows.filter((r) => r.kind === "operation").map((r) => [r.label, r.a, r.b])).toEqual([
      ["attn", "whole", "heads into 2"],
      ["norm", "whole", "whole"],
    ]);
  });

  it("describes a cut no one mesh axis decides, and a grid", () => {
    expect(describePlacement(placement("x", { N: 2 }, null))).toBe("N into 2");
    expect(describePlacement(placement("x", { N: 2, H: 4 }, { N: "dp", H: "tp" }))).toBe(
      "N over dp (2), H over tp (4)",
    );
    expect(describePlacement(placement("x"))).toBe("whole");
  });

  it("never marks the unplaced document better for a device it does not use", () => {
    // given the unplaced document on its one device (no mesh: coords []) holding 600 B, and a plan on two
    const doc = cost([600], [placement("attn")], () => []);
    const plan = cost([360, 240], [placement("attn", { heads: 2 }, { heads: "tp" })]);
    // when they are compared
    const rows = compareRows(null, { plan: current, cost: doc }, { plan: mapped, cost: plan });
    const row = (label: string) => rows.find((r) => r.label === label)!;
    // then it uses 1 device with 600 B, the plan's devices are unused on its side and no 0 B wins
    expect([
      row("devices used").a,
      row("the one device (no mesh)").a,
      row("the one device (no mesh)").better,
    ]).toEqual(["1", "600 B", null]);
    expect(["device (0)", "device (1)"].map((l) => [row(l).a, row(l).b, row(l).better])).toEqual([
      ["unused", "360 B", null],
      ["unused", "240 B", null],
    ]);
    expect(row("peak memory per device").better).toBe("b");
    expect(rows.filter((r) => r.better === "a")).toEqual([]);
  });
});

describe("Compare's pickers (issue 35)", () => {
  const plan = (id: number): Plan => ({
    id,
    name: `plan ${id}`,
    mesh: { name: "m", axes: { x: 2 } },
    spec: {},
  });

  it("offer the current document always, placed or not, after the saved plans", () => {
    expect(compareChoices([], true, "current document")).toEqual([
      { value: CURRENT, text: "current document" },
    ]);
    expect(compareChoices([plan(1), plan(2)], true, "current document").map((o) => o.text)).toEqual(
      ["plan 1", "plan 2", "current document"],
    );
    expect(compareChoices([plan(1)], false, "current document").map((o) => o.value)).toEqual(["1"]);
  });
});
