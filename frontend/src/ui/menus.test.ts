import { describe, expect, it } from "vitest";
import { menuItems } from "./menus";

describe("menuItems", () => {
  it("offers the canvas actions with their keys", () => {
    const labels = menuItems(null, () => undefined).map((i) => `${i.label} [${i.keys}]`);
    expect(labels).toContain("Paste [Ctrl+V]");
    expect(labels).toContain("Shortcuts and help [?]");
  });

  it("offers an operation its own commands first, then copy and delete", () => {
    const ran: string[] = [];
    const items = menuItems("operation", (a) => ran.push(a), {
      explain: () => ran.push("explain"),
      projection: () => ran.push("projection"),
    });
    expect(items.map((i) => i.label)).toEqual([
      "Explain step by step",
      "Index space & projections",
      "Copy",
      "Delete the selection",
    ]);
    items.at(-1)!.run();
    items[0]!.run();
    expect(ran).toEqual(["delete", "explain"]);
  });

  it("disables what the role does not allow, with the reason", () => {
    const items = menuItems(
      "tensor",
      () => undefined,
      {},
      (a) => (a === "delete" ? "viewers cannot edit" : undefined),
    );
    expect(items.find((i) => i.label === "Delete the selection")!.disabled).toBe(
      "viewers cannot edit",
    );
    expect(items.find((i) => i.label === "Copy")!.disabled).toBeUndefined();
  });
});
