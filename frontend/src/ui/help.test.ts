import { describe, expect, it } from "vitest";
import { ACTIONS } from "../actions/actions";
import { GROUPS, helpSections, keyLabel } from "./help";

describe("helpSections", () => {
  it("lists every registered action once, with every one of its keys", () => {
    const sections = helpSections(ACTIONS);
    const names = sections.flatMap((s) => s.rows.map((r) => r.name));
    expect([...names].sort()).toEqual(ACTIONS.map((a) => a.name).sort());
    const redo = sections.flatMap((s) => s.rows).find((r) => r.name === "redo")!;
    expect(redo.keys).toEqual(["Ctrl+Shift+Z", "Ctrl+Y"]);
  });

  it("groups by GROUPS and puts unknown actions under Other", () => {
    const extra = { name: "frob", title: "Frobnicate", keys: ["x"], run: () => undefined };
    const sections = helpSections([...ACTIONS, extra]);
    expect(sections.map((s) => s.title)).toEqual([
      ...GROUPS.map(([t]) => t).filter((t) => sections.some((s) => s.title === t)),
      "Other",
    ]);
    expect(sections.at(-1)!.rows.map((r) => r.name)).toEqual(["frob"]);
  });
});

describe("keyLabel", () => {
  it("spells keys for Windows/Linux and for Macs", () => {
    expect(keyLabel("Mod+Shift+z")).toBe("Ctrl+Shift+Z");
    expect(keyLabel("Mod+Shift+z", true)).toBe("⌘⇧Z");
    expect(keyLabel("Escape")).toBe("Escape");
    expect(keyLabel("/")).toBe("/");
    expect(keyLabel("Shift++")).toBe("Shift++");
    expect(keyLabel("+")).toBe("+");
  });
});
