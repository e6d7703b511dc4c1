import { describe, expect, it } from "vitest";
import type { Collective } from "../model/costs";
import { chosenProfile, edgeLabels, edgeWidth, PROFILE_KEY, rememberProfile } from "./costs";

describe("edge labels", () => {
  const c = (kind: string, tensor: string, consumer: string, bytes: number): Collective => ({
    kind,
    tensor,
    consumer,
    producer: "p",
    tensorLabel: tensor,
    producerLabel: "p",
    consumerLabel: consumer,
    meshAxes: ["tp"],
    devices: 2,
    bytes,
    seconds: 4e-6,
  });
  it("labels each edge with its collectives, their bytes and time", () => {
    const labels = edgeLabels([
      c("all-reduce", "t", "sum", 512),
      c("all-gather", "u", "dot", 2048),
      c("send", "u", "dot", 1024),
    ]);
    expect([...labels.keys()]).toEqual(["t->sum", "u->dot"]);
    expect(labels.get("t->sum")!.text).toBe("all-reduce over tp · 512 B · 4 µs");
    expect(labels.get("u->dot")!.text).toBe(
      "all-gather over tp · 2 KiB · 4 µs; send over tp · 1 KiB · 4 µs",
    );
    expect(labels.get("u->dot")!.bytes).toBe(3072);
    expect(labels.get("u->dot")!.width).toBeGreaterThan(labels.get("t->sum")!.width);
  });
  it("keeps the stroke width within its bounds", () => {
    expect(edgeWidth(0)).toBe(2);
    expect(edgeWidth(1 << 20)).toBeLessThan(edgeWidth(1 << 30));
    expect(edgeWidth(2 ** 60)).toBe(8);
  });
});

describe("profile choice", () => {
  it("persists a known name and falls back for an unknown one", () => {
    const store = new Map<string, string>();
    const storage = {
      getItem: (k: string) => store.get(k) ?? null,
      setItem: (k: string, v: string) => void store.set(k, v),
    } as unknown as Storage;
    const names = ["cpu-host", "h100-sxm-8"];
    expect(chosenProfile(storage, names, "h100-sxm-8")).toBe("h100-sxm-8");
    rememberProfile(storage, "cpu-host");
    expect(store.get(PROFILE_KEY)).toBe("cpu-host");
    expect(chosenProfile(storage, names, "h100-sxm-8")).toBe("cpu-host");
    store.set(PROFILE_KEY, "gone");
    expect(chosenProfile(storage, names, "h100-sxm-8")).toBe("h100-sxm-8");
  });
});
