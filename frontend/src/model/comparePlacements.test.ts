import { describe, expect, it, vi } from "vitest";
import { compareChoices, CURRENT } from "./comparePicker";
import {
  comparedOperations,
  describePlacement,
  NOT_LISTED,
  type OperationPlacement,
} from "./comparePlacements";
import { OPERATION, TENSOR, type LoomDocument, type LoomNode } from "./document";
import { compareRows, type Plan, type PlanCost } from "./plans";

// counts how often a table indexes the document (the real nodeById, wrapped)
const indexed = vi.hoisted(() => ({ count: 0 }));
vi.mock("./document", async (importOriginal) => {
  const actual = await importOriginal<typeof import("./document")>();
  return {
    ...actual,
    nodeById: (doc: LoomDocument) => {
      indexed.count += 1;
      return actual.nodeById(doc);
    },
  };
});

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

describe("Compare on a large graph, and past the server's list bound (review)", () => {
  it("indexes the document once per table, not once per operation row", () => {
    // given a document of 300 operations, each writing its own tensor, and a plan splitting each
    const nodes: LoomNode[] = [];
    for (let i = 0; i < 300; i++) {
      nodes.push({ id: `t${i}`, type: TENSOR, label: `x${i}`, body: {} });
      nodes.push({
        id: `op${i}`,
        type: OPERATION,
        label: `mul${i}`,
        body: { kernel: "op:mul", outputs: { out: [{ tensorId: `t${i}` }] } },
      });
    }
    const document: LoomDocument = { id: "d", nodes };
    const ops = nodes.filter((n) => n.type === OPERATION).map((n) => n.id);
    const split = cost(
      [1, 1],
      ops.map((id) => placement(id, { N: 2 }, { N: "tp" })),
    );
    const whole = cost(
      [2],
      ops.map((id) => placement(id)),
      () => [],
    );
    // when the table is built
    indexed.count = 0;
    const rows = compareRows(
      document,
      { plan: { ...current, spec: {} }, cost: whole },
      { plan: mapped, cost: split },
    ).filter((r) => r.kind === "operation");
    // then every operation is named from the document, which was indexed once
    expect(indexed.count).toBe(1);
    expect(rows).toHaveLength(300);
    expect([rows[0].label, rows[299].label, rows[299].b]).toEqual([
      "mul0 → x0",
      "mul299 → x299",
      "N over tp (2)",
    ]);
  });

  it("names an operation by the server's placement label when the document is not loaded", () => {
    // given placements whose labels are names, not ids
    const named = (operation: string, label: string): OperationPlacement => ({
      ...placement(operation),
      label,
    });
    const a = cost([1], [named("0f3c9a1e-77aa", "attention"), named("9b2d4c5f-11bb", "mlp up")]);
    // when compared without a document
    const rows = compareRows(
      null,
      { plan: { ...current, spec: {} }, cost: a },
      { plan: mapped, cost: a },
    );
    // then the rows are named by label, never by a slice of the id
    expect(rows.filter((r) => r.kind === "operation").map((r) => r.label)).toEqual([
      "attention",
      "mlp up",
    ]);
  });

  it("orders operations by the document, then as the sides list them, without searching per comparison", () => {
    const sides = [
      {
        plan: { ...current, spec: {} },
        cost: cost(
          [1],
          ["e", "d", "c", "b", "a"].map((id) => placement(id)),
        ),
      },
    ];
    // the document knows c and a (in that order); the others keep the order the side lists them
    expect(comparedOperations(sides, ["c", "a"])).toEqual(["c", "a", "e", "d", "b"]);
    expect(comparedOperations(sides, [])).toEqual(["e", "d", "c", "b"].concat("a"));
  });

  it("says an operation the server's placements left out is not listed, not whole, and not a difference", () => {
    // given a mapped plan's cost cut at the list bound: attn is listed (split), norm and up were left out
    const cut: PlanCost = {
      ...cost([300, 300], [placement("attn", { heads: 2 }, { heads: "tp" })]),
      omitted: { placements: 1 },
    };
    const doc = cost([600], [placement("attn"), placement("up")], () => []);
    // when compared with the unplaced document
    const rows = compareRows(null, { plan: current, cost: doc }, { plan: mapped, cost: cut });
    // then up reads "not listed" on the cut side (its empty spec would have said "whole"), and
    // whether the sides differ on it is unknown
    expect(
      rows.filter((r) => r.kind === "operation").map((r) => [r.label, r.a, r.b, r.differs]),
    ).toEqual([
      ["attn", "whole", "heads over tp (2)", true],
      ["norm", "whole", NOT_LISTED, null],
      ["up", "whole", NOT_LISTED, null],
    ]);
  });

  it("reads the spec for an unlisted operation when nothing was cut", () => {
    const full: PlanCost = { ...cost([1], [placement("attn")]), omitted: { placements: 0 } };
    const rows = compareRows(null, { plan: current, cost: full }, { plan: current, cost: full });
    expect(
      rows.filter((r) => r.kind === "operation").map((r) => [r.label, r.a, r.differs]),
    ).toEqual([
      ["attn", "whole", false],
      ["norm", "whole", false],
    ]);
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
