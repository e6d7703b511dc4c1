/**
 * What the server's cost model says of a plan (geon.core.plans.cost, issue 16: REST
 * ``GET .../plans/<id>/cost?profile=``) and how its bytes and seconds read to a person.
 */

/** The bytes a device holds at its peak, by what they are (geon.core.plans.cost.ledger, DESIGN.md
 * §9): a forward document has parameters, activations, temporaries and communication buffers; a
 * training step (§11) also gradients and optimizer state. */
export interface MemoryParts {
  parameters: number;
  gradients: number;
  optimizer: number;
  activations: number;
  temporaries: number;
  communication: number;
}

/** One collective the cost model infers on an edge (geon.core.plans.cost, issue 16 item 3). */
export interface Collective {
  kind: string;
  tensor: string;
  producer: string;
  consumer: string;
  /** The names a person reads (the planned document's labels, else kernels). */
  tensorLabel: string;
  producerLabel: string;
  consumerLabel: string;
  meshAxes: string[];
  devices: number;
  bytes: number;
  seconds: number;
  /** A pipelined plan's `send` between stages: its microbatch, the stages it joins
   * (from, to) and the pass that sends it ("forward" or "backward"). */
  microbatch?: number;
  stages?: [number, number];
  pass?: "forward" | "backward";
}

/** One device's line of the cost model's ledger: its work, its time and its peak memory. */
export interface LedgerRow {
  mesh: string;
  coords: number[];
  flops: number;
  computeSeconds: number;
  commSeconds: number;
  peakBytes: number;
  /** The peak's parts: parameters, gradients, optimizer state, activations, temporaries and
   * communication buffers. */
  memory?: MemoryParts;
  overBudget: boolean;
  /** Past the server's row bound, one row stands for this many devices of equal figures
   * (``devices``: the first of them); absent, the row is one device. */
  count?: number;
  devices?: number[][];
}

/** A plan's cost under a hardware profile (REST ``GET .../plans/<id>/cost?profile=``). */
export interface ProfiledCost {
  profile: { name: string; device: { memory: number } };
  collectives: Collective[];
  ledger: LedgerRow[];
  time: { lower: number; upper: number };
  memory: { capacity: number; imbalancePercent: number; overBudget: boolean };
  /** What each list left out past the server's bounds (``ledger``: devices not listed). */
  omitted?: Record<string, number>;
}

/** Bytes as people read them: "96 B", "1.5 KiB", "3.2 MiB". */
export function showBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${Number((n / 1024).toFixed(1))} KiB`;
  if (n < 1024 ** 3) return `${Number((n / 1024 ** 2).toFixed(1))} MiB`;
  return `${Number((n / 1024 ** 3).toFixed(1))} GiB`;
}

/** Seconds as people read them: "850 ns", "12.3 µs", "4.5 ms", "1.20 s". */
export function showSeconds(t: number): string {
  if (t === 0) return "0 s";
  if (t < 1e-6) return `${Number((t * 1e9).toPrecision(3))} ns`;
  if (t < 1e-3) return `${Number((t * 1e6).toPrecision(3))} µs`;
  if (t < 1) return `${Number((t * 1e3).toPrecision(3))} ms`;
  return `${Number(t.toPrecision(3))} s`;
}
