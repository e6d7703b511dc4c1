import { describe, expect, it } from "vitest";
import { signInUrl, storageKey, storedDocument, tryoutOf } from "./tryout";

describe("the try page", () => {
  it("reads the lesson or puzzle from data-try, and nothing else", () => {
    expect(tryoutOf("lesson:dot_and_duals")).toEqual({ kind: "lesson", key: "dot_and_duals" });
    expect(tryoutOf("puzzle:matvec_dual")).toEqual({ kind: "puzzle", key: "matvec_dual" });
    expect(tryoutOf("graph:x")).toBeNull();
    expect(tryoutOf("lesson:../x")).toBeNull();
    expect(tryoutOf(undefined)).toBeNull();
  });

  it("keeps each lesson's work under its own key, and ignores what is not a document", () => {
    const t = { kind: "puzzle", key: "row_sums" } as const;
    const kept: Record<string, string> = { [storageKey(t)]: JSON.stringify({ nodes: [] }) };
    const storage = { getItem: (k: string) => kept[k] ?? null };
    expect(storageKey(t)).toBe("geon-try:puzzle:row_sums");
    expect(storedDocument(t, storage)).toEqual({ nodes: [] });
    kept[storageKey(t)] = "{not json";
    expect(storedDocument(t, storage)).toBeNull();
    kept[storageKey(t)] = JSON.stringify({ nodes: 3 });
    expect(storedDocument(t, storage)).toBeNull();
    expect(storedDocument({ kind: "lesson", key: "other" }, storage)).toBeNull();
  });

  it("signs in back to the same page, asking it to keep the work", () => {
    expect(signInUrl({ pathname: "/learn/try/dot_and_duals/" })).toBe(
      "/accounts/login/?next=%2Flearn%2Ftry%2Fdot_and_duals%2F%3Fkeep%3D1",
    );
  });
});
