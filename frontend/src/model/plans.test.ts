import { describe, expect, it } from "vitest";
import {
  APPLICATION,
  INDEX_AXES,
  IPF_INDEX,
  IPF_SIGNATURE,
  OPERATION,
  TENSOR,
  type LoomDocument,
  type LoomNode,
  type Range,
} from "./document";
import {
  collectiveCounts,
  compareRows,
  currentPlans,
  describeEntry,
  dominantTerm,
  entryOf,
  profileAssumptions,
  evenSizes,
  notSplitLines,
  operationTitle,
  opsToPlan,
  planFromDocument,
  shardsOf,
  type Plan,
  type PlanCost,
} from "./plans";
import { showBytes, showSeconds, type Collective, type LedgerRow } from "./costs";

const r = (start: number[], end: number[]): Range => ({ start, end });

/** A dot-like op over (H, N) = [0:4, 0:6] writing z, and a second op "tail" without applications. */
function doc(apps: Range[], tailApps: Range[] = []): LoomDocument {
  const op = (id: string, label: string): LoomNode => ({
    id,
    type: OPERATION,
    label,
    body: {
      kernel: "op:negative",
      inputs: { tensor: [{ tensorId: "x", range: r([0, 0], [4, 6]) }] },
      outputs: { result: [{ tensorId: "z", range: r([0, 0], [4, 6]) }] },
    },
    tags: {
      [INDEX_AXES]: { axes: ["H", "N"] },
      [IPF_INDEX]: r([0, 0], [4, 6]),
      [IPF_SIGNATURE]: { inputs: {}, outputs: {} },
    },
  });
  const app = (opId: string, i: number, index: Range): LoomNode => ({
    id: `${opId}-app${i}`,
    type: APPLICATION,
    body: { operationId: opId },
    tags: { [IPF_INDEX]: index },
  });
  return {
    id: "g",
    nodes: [
      { id: "x", type: TENSOR, body: { dtype: "float32", range: r([0, 0], [4, 6]) } },
      { id: "z", type: TENSOR, label: "z", body: { dtype: "float32", range: r([0, 0], [4, 6]) } },
      op("op", "dot"),
      op("tail", "tail"),
      ...apps.map((a, i) => app("op", i, a)),
      ...tailApps.map((a, i) => app("tail", i, a)),
    ],
  };
}

const op = (d: LoomDocument, id = "op") => d.nodes.find((n) => n.id === id)!;

describe("the spec of the document's sharding", () => {
  const cases: [string, Range[], unknown][] = [
    ["no applications: whole", [], { dim: "H", parts: 1 }],
    ["one application over everything: whole", [r([0, 0], [4, 6])], { dim: "H", parts: 1 }],
    ["rows in two even parts", [r([0, 0], [2, 6]), r([2, 0], [4, 6])], { dim: "H", parts: 2 }],
    ["columns in chunks of 4", [r([0, 0], [4, 4]), r([0, 4], [4, 6])], { dim: "N", chunk: 4 }],
    ["columns as 1, 5", [r([0, 0], [4, 1]), r([0, 1], [4, 6])], { dim: "N", sizes: [1, 5] }],
    [
      "a 2×3 grid in any order",
      [
        r([2, 0], [4, 2]),
        r([0, 0], [2, 2]),
        r([0, 2], [2, 4]),
        r([0, 4], [2, 6]),
        r([2, 2], [4, 4]),
        r([2, 4], [4, 6]),
      ],
      { grid: { H: 2, N: 3 } },
    ],
  ];
  for (const [label, apps, want] of cases) {
    it(label, () => {
      const d = doc(apps);
      expect(entryOf(d, op(d))).toEqual(want);
    });
  }

  it("refuses a gap, an overlap and an uneven grid, naming the operation", () => {
    const gap = doc([r([0, 0], [2, 6])]);
    expect(() => entryOf(gap, op(gap))).toThrow(
      'operation "dot" has applications that do not cut its index range into a grid (a gap or an overlap); fix its coverage or split it again before saving',
    );
    const overlap = doc([r([0, 0], [3, 6]), r([2, 0], [4, 6])]);
    expect(() => entryOf(overlap, op(overlap))).toThrow("do not cut its index range into a grid");
    const uneven = doc([
      r([0, 0], [1, 3]),
      r([0, 3], [1, 6]),
      r([1, 0], [4, 3]),
      r([1, 3], [4, 6]),
    ]);
    expect(() => entryOf(uneven, op(uneven))).toThrow(
      'operation "dot" is cut unevenly along "H" in a grid',
    );
  });

  it("names every operation and sizes the mesh for the most shards", () => {
    const d = doc(
      [r([0, 0], [2, 6]), r([2, 0], [4, 6])],
      [r([0, 0], [4, 2]), r([0, 2], [4, 4]), r([0, 4], [4, 6])],
    );
    expect(planFromDocument(d, " rows ")).toEqual({
      mesh: { name: "rows", axes: { devices: 3 } },
      spec: { op: { dim: "H", parts: 2 }, tail: { dim: "N", parts: 3 } },
    });
    expect(() => planFromDocument(doc([r([0, 0], [2, 6])]), "broken")).toThrow(
      'operation "dot" has applications',
    );
  });
});

describe("switching the document to a plan", () => {
  const rows: Plan = {
    id: 1,
    name: "rows",
    mesh: { name: "rows", axes: { devices: 2 } },
    spec: { op: { dim: "H", parts: 2 }, tail: { dim: "H", parts: 1 } },
  };

  it("array_split sizes, larger first", () => {
    expect([evenSizes(10, 3), evenSizes(4, 2), evenSizes(5, 1)]).toEqual([[4, 3, 3], [2, 2], [5]]);
  });

  it("cuts the index range as the server does", () => {
    const d = doc([]);
    expect(shardsOf(op(d), { grid: { H: 2, N: 2 } })).toEqual([
      r([0, 0], [2, 3]),
      r([0, 3], [2, 6]),
      r([2, 0], [4, 3]),
      r([2, 3], [4, 6]),
    ]);
    expect(shardsOf(op(d), { dim: "N", chunk: 4 })).toEqual([r([0, 0], [4, 4]), r([0, 4], [4, 6])]);
    expect(shardsOf(op(d), { over: { "1": "x" } }, { name: "m", axes: { x: 3 } })).toEqual([
      r([0, 0], [4, 2]),
      r([0, 2], [4, 4]),
      r([0, 4], [4, 6]),
    ]);
    expect(shardsOf(op(d), { dim: "H", parts: 1 })).toBeNull();
  });

  it("sends nothing when the document matches (a whole op with or without its one application)", () => {
    expect(
      opsToPlan(doc([r([0, 2], [4, 6]), r([0, 0], [4, 2])].reverse().map((x) => x)), {
        ...rows,
        spec: { op: { dim: "N", sizes: [2, 4] } },
      }),
    ).toEqual([]);
    expect(
      opsToPlan(doc([r([2, 0], [4, 6]), r([0, 0], [2, 6])], [r([0, 0], [4, 6])]), rows),
    ).toEqual([]);
    expect(
      currentPlans(doc([r([0, 0], [2, 6]), r([2, 0], [4, 6])]), [
        rows,
        { ...rows, id: 2, spec: { op: { dim: "N", parts: 2 } } },
      ]),
    ).toEqual([1]);
  });

  it("shards what differs and takes the applications of a whole operation away", () => {
    const d = doc([r([0, 0], [4, 3]), r([0, 3], [4, 6])], [r([0, 0], [2, 6]), r([2, 0], [4, 6])]);
    expect(opsToPlan(d, rows)).toEqual([
      { op: "shard", operation: "op", dim: "H", parts: 2 },
      { op: "remove_node", id: "tail-app0" },
      { op: "remove_node", id: "tail-app1" },
    ]);
    // a plan that does not name an operation runs it whole; "over" becomes a grid of the mesh's sizes
    expect(
      opsToPlan(doc([]), {
        mesh: { name: "m", axes: { x: 2, y: 3 } },
        spec: { op: { over: { H: "x", N: "y" } } },
      }),
    ).toEqual([{ op: "shard", operation: "op", grid: { H: 2, N: 3 } }]);
  });

  it("refuses a plan naming an operation the graph no longer has, and changes nothing", () => {
    expect(() => opsToPlan(doc([]), { ...rows, spec: { gone: { dim: "H", parts: 2 } } })).toThrow(
      'the plan names operation "gone" that the graph no longer has',
    );
  });

  it("round-trips: the plan saved from a document needs no edit to switch to", () => {
    const d = doc(
      [r([0, 0], [4, 1]), r([0, 1], [4, 6])],
      [r([0, 0], [2, 3]), r([0, 3], [2, 6]), r([2, 0], [4, 3]), r([2, 3], [4, 6])],
    );
    expect(opsToPlan(d, planFromDocument(d, "p"))).toEqual([]);
  });
});

describe("comparing two plans", () => {
  const cost = (totals: number[], moved: number[]): PlanCost => ({
    version: 3,
    devices: totals.map((t, i) => ({
      mesh: "m",
      coords: [i],
      inputs: t / 2,
      outputs: t / 2,
      temporaries: 0,
      total: t,
    })),
    transfers: moved.map((b) => ({ source: [0], target: [1], bytes: b })),
    transferBytes: moved.reduce((s, b) => s + b, 0),
  });
  const a: Plan = {
    id: 1,
    name: "rows",
    mesh: { name: "rows", axes: { devices: 2 } },
    spec: { op: { dim: "H", parts: 2 }, tail: { dim: "H", parts: 1 } },
  };
  const b: Plan = {
    id: 2,
    name: "cols",
    mesh: { name: "cols", axes: { devices: 3 } },
    spec: { op: { dim: "N", parts: 3 }, tail: { dim: "H", parts: 1 } },
  };

  it("marks the lower figure and shows each plan's split per operation", () => {
    const rows = compareRows(
      doc([]),
      { plan: a, cost: cost([96, 96], [2048]) },
      { plan: b, cost: cost([64, 64, 64], []) },
    );
    expect(rows.map((x) => [x.label, x.a, x.b, x.better, x.differs ?? null])).toEqual([
      ["devices used", "2", "3", null, null],
      ["transfers", "1", "0", "b", null],
      ["bytes moved", "2 KiB", "0 B", "b", null],
      ["peak memory per device", "96 B", "64 B", "b", null],
      ["memory on all devices", "192 B", "192 B", null, null],
      ["device (0)", "96 B", "64 B", "b", null],
      ["device (1)", "96 B", "64 B", "b", null],
      ["device (2)", "unused", "64 B", null, null],
      ["dot → z", "H into 2", "N into 3", null, true],
      ["tail → z", "whole", "whole", null, false],
    ]);
    const unlabelled = doc([]);
    delete op(unlabelled).label;
    expect(
      compareRows(unlabelled, { plan: a, cost: cost([1], []) }, { plan: b, cost: cost([1], []) })
        .filter((x) => x.kind === "operation")
        .map((x) => x.label),
    ).toEqual(["op:negative → z", "tail → z"]);
    // and an output without a label is named as the canvas names it, never by its id
    delete unlabelled.nodes.find((n) => n.id === "z")!.label;
    expect(
      compareRows(unlabelled, { plan: a, cost: cost([1], []) }, { plan: b, cost: cost([1], []) })
        .filter((x) => x.kind === "operation")
        .map((x) => x.label),
    ).toEqual(["op:negative → negative out", "tail → tail out"]);
  });

  it("adds step time, collectives and device memory when both costs carry a profile", () => {
    const collective = (kind: string, bytes: number): Collective => ({
      kind,
      tensor: "z",
      producer: "op",
      consumer: "tail",
      tensorLabel: "z",
      producerLabel: "dot",
      consumerLabel: "tail",
      meshAxes: ["tp"],
      devices: 2,
      bytes,
      seconds: 1e-5,
    });
    const profiled = (
      upper: number,
      collectives: Collective[],
      peak: number,
      over: boolean,
    ): PlanCost => ({
      ...cost([96, 96], []),
      profile: { name: "h100-sxm-8", device: { memory: 1000 } },
      collectives,
      ledger: [
        {
          mesh: "m",
          coords: [0],
          flops: 1,
          computeSeconds: upper / 2,
          commSeconds: upper / 2,
          peakBytes: peak,
          overBudget: over,
        },
      ],
      time: { lower: upper / 2, upper },
      memory: { capacity: 1000, imbalancePercent: 0, overBudget: over },
    });
    const ca = profiled(
      2e-3,
      [
        collective("all-reduce", 2048),
        collective("all-reduce", 2048),
        collective("all-gather", 512),
      ],
      2000,
      true,
    );
    const cb = profiled(5e-4, [], 900, false);
    const rows = compareRows(doc([]), { plan: a, cost: ca }, { plan: b, cost: cb })
      .filter((x) => x.kind === "cost")
      .slice(5, 12);
    expect(rows.map((x) => [x.label, x.a, x.b, x.better])).toEqual([
      ["step time, at most (h100-sxm-8)", "2 ms", "500 µs", "b"],
      ["step time, at least", "1 ms", "250 µs", "b"],
      ["collectives", "all-reduce ×2, all-gather ×1", "none", "b"],
      ["bytes in collectives", "4.5 KiB", "0 B", "b"],
      // the slowest device's larger term, with its share of the step (issue 35)
      ["step time dominated by", "compute (1 ms of 2 ms)", "compute (250 µs of 500 µs)", null],
      ["peak memory, with temporaries", "2 KiB", "900 B", "b"],
      ["device memory", "over 1000 B", "fits", "b"],
    ]);
    // without a profile on both sides, no such rows
    expect(
      compareRows(doc([]), { plan: a, cost: ca }, { plan: b, cost: cost([1], []) }).some(
        (x) => x.label === "collectives",
      ),
    ).toBe(false);
  });

  it("shows seconds and collective counts as people read them", () => {
    expect([0, 8.5e-7, 1.23e-5, 4.5e-3, 1.2].map(showSeconds)).toEqual([
      "0 s",
      "850 ns",
      "12.3 µs",
      "4.5 ms",
      "1.2 s",
    ]);
    expect(collectiveCounts([])).toBe("none");
  });

  it("describes every kind of entry", () => {
    expect([
      describeEntry({ grid: { H: 2, N: 2 } }),
      describeEntry({ dim: "N", chunk: 4 }),
      describeEntry({ dim: "N", sizes: [1, 5] }),
      describeEntry({ over: { H: "x" } }),
      describeEntry(undefined),
    ]).toEqual(["grid H×N 2×2", "N by 4", "N as 1, 5", "over H→x", "whole"]);
    expect([showBytes(0), showBytes(1536), showBytes(3 * 1024 * 1024)]).toEqual([
      "0 B",
      "1.5 KiB",
      "3 MiB",
    ]);
  });
});

describe("a plan typed by axis mapping", async () => {
  const { parseMapping, parseMesh, PlanTextError } = await import("./plans");
  it("reads the mesh and the mapping, in any of the usual arrows", () => {
    const mesh = parseMesh("dp=2, tp = 4");
    expect(mesh).toEqual({ name: "mesh", axes: { dp: 2, tp: 4 } });
    expect(parseMapping("N=dp, F→tp, D: tp", mesh)).toEqual({ N: "dp", F: "tp", D: "tp" });
  });
  it("names what is wrong", () => {
    expect(() => parseMesh("")).toThrow('the mesh is empty; expected e.g. "dp=2, tp=4"');
    expect(() => parseMesh("dp=0")).toThrow(
      'mesh axis "dp" has size "0"; expected a whole number >= 1',
    );
    expect(() => parseMesh("dp=2, dp=4")).toThrow('"dp" is given twice in the mesh');
    expect(() => parseMapping("N=pp", parseMesh("dp=2"))).toThrow(
      'axis "N" is mapped to "pp", which is not a mesh axis; expected one of (dp)',
    );
    expect(() => parseMapping("N", parseMesh("dp=2"))).toThrow(PlanTextError);
  });
});

describe("where inputs live, typed", async () => {
  const { parseInputs, parseMesh } = await import("./plans");
  const mesh = parseMesh("dp=2, tp=4");
  it("reads replicated, over mesh axes and one device, by label", () => {
    expect(parseInputs("x: N=dp; w1: replicated; b: device 0,3", mesh)).toEqual({
      x: { over: { N: "dp" } },
      w1: "replicated",
      b: { device: [0, 3] },
    });
    expect(parseInputs("", mesh)).toEqual({});
  });
  it("reads a label with colons, as ONNX names weights", () => {
    expect(parseInputs("onnx::MatMul_193: N=tp; layer.linear1.bias: replicated", mesh)).toEqual({
      "onnx::MatMul_193": { over: { N: "tp" } },
      "layer.linear1.bias": "replicated",
    });
  });
  it("names what is wrong", () => {
    expect(() => parseInputs("x", mesh)).toThrow('"x" is not valid where inputs live');
    expect(() => parseInputs("x: device 0", mesh)).toThrow(
      "expected a device's 2 coordinates on the mesh (dp, tp), e.g. device 0,0",
    );
    expect(() => parseInputs("x: N=pp", mesh)).toThrow(
      'axis "N" is mapped to "pp", which is not a mesh axis',
    );
  });
});

describe("a mapped plan as the form's texts", async () => {
  const { parseInputs, parseMapping, parseMesh, planTexts } = await import("./plans");
  it("reads back to the same mesh, mapping and inputs", () => {
    const plan = {
      id: 1,
      name: "both",
      mesh: { name: "mesh", axes: { dp: 2, tp: 4 } },
      spec: {},
      axisMapping: { N: "dp", F: "tp" },
      inputs: {
        x: { over: { N: "dp" } },
        "onnx::w1": "replicated" as const,
        b: { device: [0, 3] },
      },
    };
    const texts = planTexts(plan);
    expect(texts).toEqual({
      mesh: "dp=2, tp=4",
      mapping: "N=dp, F=tp",
      inputs: "x: N=dp; onnx::w1: replicated; b: device 0,3",
    });
    const mesh = parseMesh(texts.mesh);
    expect([mesh.axes, parseMapping(texts.mapping, mesh), parseInputs(texts.inputs, mesh)]).toEqual(
      [plan.mesh.axes, plan.axisMapping, plan.inputs],
    );
    expect(planTexts({ ...plan, axisMapping: undefined, inputs: undefined })).toEqual({
      mesh: "dp=2, tp=4",
      mapping: "",
      inputs: "",
    });
  });
});

describe("why a plan is bad, by name (issue 35)", () => {
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
  it("names an operation by its name, output and scope, never its id", () => {
    expect(operationTitle(doc, "ln")).toBe("op:layer_norm → ln1 in layers.0/ln");
    expect(operationTitle(doc, "gone")).toBe("an operation no longer in the graph");
  });
  it("lists what a plan's mapping leaves whole with the server's reason", () => {
    const plan = {
      id: 1,
      name: "p",
      mesh: { name: "m", axes: { tp: 2 } },
      spec: {},
      applications: {
        notSplit: [{ operation: "ln", axes: ["D"], reason: 'it contracts or reduces "D"' }],
      },
    };
    expect(notSplitLines(doc, plan)).toEqual([
      'op:layer_norm → ln1 in layers.0/ln runs whole: it contracts or reduces "D"',
    ]);
    expect(notSplitLines(doc, { ...plan, applications: {} })).toEqual([]);
  });
});

describe("compare as a decision table (issue 35)", () => {
  const row = (compute: number, comm: number, memory?: LedgerRow["memory"]): LedgerRow => ({
    mesh: "m",
    coords: [0],
    flops: 1,
    computeSeconds: compute,
    commSeconds: comm,
    peakBytes: 100,
    overBudget: false,
    ...(memory ? { memory } : {}),
  });
  it("names the term that bounds the step", () => {
    expect(dominantTerm({ ledger: [row(1e-3, 3e-3), row(2e-3, 0)] } as unknown as PlanCost)).toBe(
      "communication (3 ms of 4 ms)",
    );
    expect(dominantTerm({ ledger: [] } as unknown as PlanCost)).toBe("—");
  });
  it("states what the profile assumes next to the times", () => {
    const profile = {
      name: "h100-sxm-8",
      device: { memory: 8e10, kernelFloor: 5e-6 },
      defaultLink: { bandwidth: 4.5e11, latency: 2e-6 },
    };
    expect(profileAssumptions(profile)).toBe(
      "h100-sxm-8 assumes links of 450 GB/s with 2 µs latency, a 5 µs kernel floor, 80 GB per device",
    );
  });
  it("defines the busiest device's memory by its parts", () => {
    const parts = {
      parameters: 64,
      gradients: 0,
      optimizer: 128,
      activations: 32,
      temporaries: 0,
      communication: 0,
    };
    const profiled = (memory?: LedgerRow["memory"]): PlanCost =>
      ({
        version: 1,
        devices: [],
        transfers: [],
        transferBytes: 0,
        profile: { name: "p", device: { memory: 1000 } },
        collectives: [],
        ledger: [row(1, 0, memory)],
        time: { lower: 1, upper: 1 },
        memory: { capacity: 1000, imbalancePercent: 0, overBudget: false },
      }) as PlanCost;
    const plan = (id: number): Plan => ({
      id,
      name: `p${id}`,
      mesh: { name: "m", axes: { d: 1 } },
      spec: {},
    });
    const rows = compareRows(
      null,
      { plan: plan(1), cost: profiled(parts) },
      { plan: plan(2), cost: profiled() },
    ).filter((r) => r.label.includes("of which"));
    expect(rows.map((r) => [r.label.trim(), r.a, r.b])).toEqual([
      ["of which parameters", "64 B", "0 B"],
      ["of which optimizer", "128 B", "0 B"],
      ["of which activations", "32 B", "0 B"],
    ]);
  });
});
