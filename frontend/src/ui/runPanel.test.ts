import { describe, expect, it } from "vitest";
import { engineModes, runMode } from "./runPanel";
import { collectiveRows, formatBytes } from "./runCollectives";
import { heatColor } from "./runHeat";
import { verifyRows } from "./runVerify";

describe("heat map colours", () => {
  it("runs blue (min) through white (middle) to red (max), grey for a missing value", () => {
    expect(heatColor(0, 0, 10)).toBe("rgb(37,99,235)");
    expect(heatColor(5, 0, 10)).toBe("rgb(248,250,252)");
    expect(heatColor(10, 0, 10)).toBe("rgb(220,38,38)");
    expect(heatColor(3, 3, 3)).toBe("rgb(248,250,252)");
    expect(heatColor(null, 0, 1)).toBe("#9ca3af");
  });
});

describe("collectives of a sharded run", () => {
  const gather = {
    kind: "all-gather",
    tensor: "4f1c0a52-0000-4000-8000-000000000001",
    tensorLabel: "a",
    producer: "4f1c0a52-0000-4000-8000-000000000002",
    consumer: "4f1c0a52-0000-4000-8000-000000000003",
    meshAxes: ["d"],
    predictedBytes: 512,
    measuredBytes: 512,
  };

  it("shows each collective by tensor label with predicted and measured bytes, marking a difference", () => {
    const rows = collectiveRows([
      gather,
      {
        ...gather,
        kind: "send",
        tensorLabel: null,
        meshAxes: [],
        predictedBytes: 3 * 1024 * 1024,
        measuredBytes: 96,
      },
    ]);
    expect(rows).toEqual([
      {
        collective: "all-gather over d",
        tensor: "a",
        predicted: "512 B",
        measured: "512 B",
        differs: false,
      },
      {
        collective: "send",
        tensor: "unnamed tensor",
        predicted: "3 MiB",
        measured: "96 B",
        differs: true,
      },
    ]);
    // ids never reach a person
    expect(JSON.stringify(rows)).not.toContain("4f1c0a52");
  });

  it("has no rows for a logical run or a run from before collectives were measured", () => {
    expect(collectiveRows([])).toEqual([]);
    expect(collectiveRows(undefined)).toEqual([]);
  });

  it("formats bytes in binary units", () => {
    expect([formatBytes(0), formatBytes(1023), formatBytes(1536), formatBytes(2 ** 30)]).toEqual([
      "0 B",
      "1023 B",
      "1.5 KiB",
      "1 GiB",
    ]);
  });
});

describe("the JAX engine in the run panel", () => {
  it("offers jax only when the server lists it, once", () => {
    expect(engineModes(["numpy"], ["logical", "sharded"])).toEqual([]);
    expect(
      engineModes(["numpy", "jax"], ["logical", "sharded"]).map((m) => [m.value, m.text]),
    ).toEqual([["jax", "jax (placed plan)"]]);
    expect(engineModes(["numpy", "jax"], ["logical", "sharded", "jax"])).toEqual([]);
  });

  it("names a run's mode on the status line", () => {
    expect(runMode({ sharded: false, engine: "jax" })).toBe("on jax");
    expect(runMode({ sharded: true })).toBe("sharded");
    expect(runMode({ sharded: false, engine: "numpy" })).toBe("logical");
  });
});

describe("the verify report", () => {
  it("puts each predicted collective beside the compiled one it matches, then what nothing predicted", () => {
    const report = {
      agrees: true,
      unexplained: 0,
      devices: 2,
      compileSeconds: 0.4,
      predicted: [
        {
          kind: "all-reduce",
          bytesPerDevice: 512,
          rule: "equal",
          match: 0,
          meshAxes: ["tp"],
          groups: 1,
          tensorLabel: "mlp out partial",
          producerLabel: "op:dot_partial",
          consumerLabel: "op:sum",
        },
      ],
      compiled: [
        {
          kind: "all-reduce",
          bytesPerDevice: 512,
          rule: "equal",
          match: 0,
          devices: 2,
          groups: 1,
          combined: 1,
        },
        {
          kind: "all-reduce",
          bytesPerDevice: 64,
          rule: "layer-norm-statistics",
          match: null,
          devices: 2,
          groups: 1,
          combined: 1,
        },
      ],
    };
    expect(verifyRows(report)).toEqual([
      {
        rule: "equal",
        tensor: "mlp out partial",
        predicted: "all-reduce 512 B ×1",
        compiled: "all-reduce 512 B ×1",
        edge: "mlp out partial: op:dot_partial → op:sum, over (tp)",
        ok: true,
      },
      {
        rule: "layer-norm-statistics",
        tensor: "–",
        predicted: "–",
        compiled: "all-reduce 64 B ×1",
        edge: "compiled on 2 devices per group",
        ok: true,
      },
    ]);
    expect(
      verifyRows({
        ...report,
        compiled: [{ ...report.compiled[1]!, rule: "unexplained" }],
        predicted: [],
      })[0]!.ok,
    ).toBe(false);
  });
});
