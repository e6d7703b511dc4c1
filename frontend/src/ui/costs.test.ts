import { describe, expect, it } from "vitest";
import {
  chosenProfile,
  edgeWidth,
  humanBytes,
  PROFILE_KEY,
  rememberProfile,
} from "./costs";

describe("humanBytes", () => {
  it("uses binary units with three significant figures", () => {
    expect(humanBytes(0)).toBe("0 B");
    expect(humanBytes(1536)).toBe("1.50 KiB");
    expect(humanBytes(8e10)).toBe("74.5 GiB");
  });
  it("refuses a negative count naming it", () => {
    expect(() => humanBytes(-1)).toThrow("got -1");
  });
});

describe("edgeWidth", () => {
  it("grows with bytes and stays within its bounds", () => {
    expect(edgeWidth(0)).toBe(1.5);
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
