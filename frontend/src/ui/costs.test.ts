import { describe, expect, it } from "vitest";
import { chosenProfile, PROFILE_KEY, rememberProfile } from "./costs";

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
