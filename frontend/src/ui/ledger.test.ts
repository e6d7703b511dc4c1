import { describe, expect, it } from "vitest";
import type { LedgerRow } from "../model/costs";
import { barScale, deviceLabel, ledgerSummary, peakWords } from "./ledger";

const row = (peakBytes: number, memory?: LedgerRow["memory"]): LedgerRow => ({
  mesh: "m",
  coords: [0],
  flops: 0,
  computeSeconds: 0,
  commSeconds: 0,
  peakBytes,
  overBudget: false,
  ...(memory ? { memory } : {}),
});

describe("device ledger", () => {
  it("names a device by its coordinates, and equal devices the server grouped by how many", () => {
    expect(deviceLabel({ ...row(8), coords: [0, 1] })).toBe("(0, 1)");
    expect(deviceLabel({ ...row(8), coords: [0, 1], count: 65536, devices: [[0, 1]] })).toBe(
      "(0, 1) ×65,536",
    );
    expect(deviceLabel({ ...row(8), count: 1, devices: [[0]] })).toBe("(0)");
  });

  it("draws bars to the capacity once a device uses a visible share of it, else to the busiest device", () => {
    expect(barScale([10, 40], 100)).toEqual({ bytes: 100, capacity: true });
    expect(barScale([10, 4], 100)).toEqual({ bytes: 100, capacity: true });
    expect(barScale([1, 4], 100)).toEqual({ bytes: 4, capacity: false });
    // over the capacity: the bar is full and the scale is the peak
    expect(barScale([150], 100)).toEqual({ bytes: 150, capacity: true });
    expect(barScale([3], Infinity)).toEqual({ bytes: 3, capacity: false });
    expect(barScale([], 100)).toEqual({ bytes: 0, capacity: false });
  });

  it("sums a plan up in one line: collectives, the step time interval, the peak and its imbalance", () => {
    const cost = {
      collectives: [],
      ledger: [row(3072), row(1024)],
      time: { lower: 85e-6, upper: 103e-6 },
      memory: { capacity: 1 << 30, imbalancePercent: 50, overBudget: false },
    };
    expect(ledgerSummary("Megatron", cost)).toBe(
      "Megatron: 0 collectives · 85 µs–103 µs per step · peak 3 KiB per device (max vs mean +50%)",
    );
    expect(
      ledgerSummary("One", {
        ...cost,
        ledger: [row(96)],
        time: { lower: 1e-3, upper: 1e-3 },
        memory: { ...cost.memory, overBudget: true },
      }),
    ).toBe("One: 0 collectives · 1 ms per step · peak 96 B per device, over memory");
  });

  it("names the parts of a device's peak that hold bytes", () => {
    const parts = {
      parameters: 1024,
      gradients: 0,
      optimizer: 512,
      activations: 512,
      temporaries: 512,
      communication: 512,
    };
    expect(peakWords(row(3072, parts))).toBe(
      "3 KiB: parameters 1 KiB, optimizer state 512 B, activations 512 B, temporaries 512 B, communication buffers 512 B",
    );
    expect(peakWords(row(96))).toBe("96 B");
  });
});
