import { afterEach, describe, expect, it, vi } from "vitest";
import type { PlansApi } from "../api/plans";
import type { Collective } from "../model/costs";
import { APPLICATION, type LoomDocument } from "../model/document";
import type { Plan } from "../model/plans";
import { CURRENT_DOCUMENT, followCurrentCost } from "./currentCost";

const collective: Collective = {
  kind: "all-reduce",
  tensor: "t",
  producer: "p",
  consumer: "q",
  tensorLabel: "t",
  producerLabel: "p",
  consumerLabel: "q",
  meshAxes: ["tp"],
  devices: 2,
  bytes: 512,
  seconds: 1e-6,
};
const plan: Plan = {
  id: 1,
  name: "Megatron",
  mesh: { name: "m", axes: { tp: 2 } },
  spec: {},
  axisMapping: { F: "tp" },
  applications: { operations: { op: ["a1"] } },
};
const holding: LoomDocument = {
  id: "g",
  nodes: [{ id: "a1", type: APPLICATION, body: { operationId: "op" } }],
};
const bare: LoomDocument = { id: "g", nodes: [] };

afterEach(() => vi.unstubAllGlobals());

describe("the current plan's cost", () => {
  it("clears pushed labels once the document holds no plan any more", () => {
    // (timers run at once; the REST cost never answers, as when it is slow)
    vi.stubGlobal("window", { setTimeout: (f: () => void) => (f(), 1), clearTimeout: () => {} });
    const drawn: [string | null, number][] = [];
    const state = { doc: holding, plans: [plan], version: 3 as number | null, busy: false };
    const api = { cost: () => new Promise(() => {}) } as unknown as PlansApi;
    const ledger = {
      replaceChildren: () => {},
      querySelector: () => null,
    } as unknown as HTMLElement;
    const profile = { value: "cpu-host" } as HTMLSelectElement;
    const follow = followCurrentCost({
      api,
      ledger,
      profile,
      onCollectives: (p, cs) => drawn.push([p, cs.length]),
      state: () => state,
    });
    follow.refresh();
    // an applied carries the plan's collectives: drawn at once
    follow.live({
      planId: 1,
      plan: "Megatron",
      version: 3,
      collectives: { "cpu-host": [collective] },
    });
    // then an edit removes the plan's Application: the document holds no plan, and nothing is drawn
    state.doc = bare;
    state.version = 4;
    follow.refresh();
    expect(drawn).toEqual([
      ["Megatron", 1],
      [null, 0],
    ]);
  });

  it("keeps what an applied carried while the plan list still has the plan as before the switch", () => {
    vi.stubGlobal("window", { setTimeout: (f: () => void) => (f(), 1), clearTimeout: () => {} });
    const drawn: [string | null, number][] = [];
    const asked: number[] = [];
    // the list was loaded before the switch: the plan has no Applications yet
    const stale: Plan = { ...plan, applications: {} };
    const state = { doc: holding, plans: [stale], version: 2 as number | null, busy: false };
    const api = {
      cost: (id: number) => (asked.push(id), new Promise(() => {})),
    } as unknown as PlansApi;
    const ledger = {
      replaceChildren: () => {},
      querySelector: () => null,
    } as unknown as HTMLElement;
    const profile = { value: "cpu-host" } as HTMLSelectElement;
    const follow = followCurrentCost({
      api,
      ledger,
      profile,
      onCollectives: (p, cs) => drawn.push([p, cs.length]),
      state: () => state,
    });
    follow.live({
      planId: 1,
      plan: "Megatron",
      version: 2,
      collectives: { "cpu-host": [collective] },
    });
    follow.refresh();
    // the labels stay, and the ledger is asked of that plan
    expect([drawn, asked]).toEqual([[["Megatron", 1]], [1]]);
  });

  it("draws nothing an applied carried for a plan it does not list or a profile it has not loaded", () => {
    const drawn: string[] = [];
    const state = { doc: holding, plans: [plan], version: 3, busy: false };
    const profile = { value: "" } as HTMLSelectElement;
    const follow = followCurrentCost({
      api: {} as PlansApi,
      ledger: {} as HTMLElement,
      profile,
      onCollectives: (p) => drawn.push(String(p)),
      state: () => state,
    });
    follow.live({
      planId: 1,
      plan: "Megatron",
      version: 3,
      collectives: { "cpu-host": [collective] },
    });
    follow.live({ planId: 9, plan: "Other", version: 3, collectives: { "": [collective] } });
    expect(drawn).toEqual([]);
  });

  it("costs a document no saved plan placed (a suggestion applied, a hand split) as the current document", async () => {
    vi.stubGlobal("window", { setTimeout: (f: () => void) => (f(), 1), clearTimeout: () => {} });
    // the ledger is drawn too: a stand-in for the few DOM calls it makes
    const drawnNode = (): unknown => ({
      setAttribute() {},
      append() {},
      addEventListener() {},
      set className(_: string) {},
      set textContent(_: string) {},
    });
    vi.stubGlobal("document", { createElement: drawnNode });
    const shown: unknown[] = [];
    const drawn: [string | null, number][] = [];
    const asked: string[] = [];
    // the document holds an Application no saved plan generated
    const hand: LoomDocument = {
      id: "g",
      nodes: [{ id: "a9", type: APPLICATION, body: { operationId: "op" } }],
    };
    const state = { doc: hand, plans: [plan], version: 5 as number | null, busy: false };
    const cost = {
      collectives: [collective],
      ledger: [],
      memory: { capacity: 1, imbalancePercent: 0, overBudget: false },
    };
    const api = {
      cost: () => (asked.push("plan"), new Promise(() => {})),
      documentCost: (profile: string) => (asked.push(`document ${profile}`), Promise.resolve(cost)),
    } as unknown as PlansApi;
    const ledger = {
      replaceChildren: (...nodes: unknown[]) => shown.push(...nodes),
      querySelector: () => null,
    } as unknown as HTMLElement;
    const profile = { value: "cpu-host" } as HTMLSelectElement;
    const follow = followCurrentCost({
      api,
      ledger,
      profile,
      onCollectives: (p, cs) => drawn.push([p, cs.length]),
      state: () => state,
    });
    follow.refresh();
    await vi.waitFor(() => expect(shown.length).toBe(1));
    // then the current document's own cost labels the edges and fills the ledger; no plan's cost is asked
    expect([asked, drawn]).toEqual([["document cpu-host"], [[CURRENT_DOCUMENT, 1]]]);
  });
});
