import { describe, expect, it } from "vitest";
import { action, ACTIONS, actionForKey, shortcutLabel, type Commands } from "./actions";

const key = (
  k: string,
  mods: Partial<{ ctrl: boolean; meta: boolean; shift: boolean; alt: boolean }> = {},
) => ({
  key: k,
  ctrlKey: mods.ctrl ?? false,
  metaKey: mods.meta ?? false,
  shiftKey: mods.shift ?? false,
  altKey: mods.alt ?? false,
});

function recorder(): { calls: string[]; commands: Commands } {
  const calls: string[] = [];
  const recording = (prefix: string): ProxyHandler<object> => ({
    get: (_t, name) =>
      name === "groups" && !prefix
        ? new Proxy({}, recording("groups."))
        : (...args: unknown[]) =>
            calls.push(`${prefix}${String(name)}${args.length ? `(${args.join(",")})` : ""}`),
  });
  return { calls, commands: new Proxy({}, recording("")) as Commands };
}

describe("actions", () => {
  it.each([
    ["Ctrl+Z", key("z", { ctrl: true }), "undo", "undo"],
    ["Cmd+Z", key("z", { meta: true }), "undo", "undo"],
    ["Ctrl+Shift+Z", key("Z", { ctrl: true, shift: true }), "redo", "redo"],
    ["Ctrl+Y", key("y", { ctrl: true }), "redo", "redo"],
    ["Delete", key("Delete"), "delete", "deleteSelection"],
    ["Backspace", key("Backspace"), "delete", "deleteSelection"],
    ["Ctrl+C", key("c", { ctrl: true }), "copy", "copy"],
    ["Ctrl+V", key("v", { ctrl: true }), "paste", "paste"],
    ["Ctrl+A", key("a", { ctrl: true }), "selectAll", "selectAll"],
    ["F", key("f"), "zoomToFit", "zoomToFit"],
    ["Shift+1", key("!", { shift: true }), "zoomToFit", "zoomToFit"],
    ["+", key("+", { shift: true }), "zoomIn", "zoomBy(1.25)"],
    ["=", key("="), "zoomIn", "zoomBy(1.25)"],
    ["-", key("-"), "zoomOut", "zoomBy(0.8)"],
    ["L", key("l"), "relayout", "relayout"],
    ["O", key("o"), "palette", "openPalette"],
    ["Ctrl+K", key("k", { ctrl: true }), "palette", "openPalette"],
    ["T", key("t"), "newTensor", "newTensor"],
    ["A", key("a"), "newAxis", "newAxis"],
    ["/", key("/"), "search", "focusSearch"],
    ["Escape", key("Escape"), "cancel", "cancel"],
    ["Enter", key("Enter"), "toggleGroup", "groups.toggleSelected"],
    ["G", key("g"), "toggleGroup", "groups.toggleSelected"],
    ["Shift+G", key("G", { shift: true }), "collapseAll", "groups.collapseAll"],
    ["Shift+E", key("E", { shift: true }), "expandAll", "groups.expandAll"],
  ])("%s runs %s", (_label, event, name, call) => {
    const found = actionForKey(event);
    expect(found?.name).toBe(name);
    const { calls, commands } = recorder();
    found!.run(commands);
    expect(calls).toEqual([call]);
  });

  it("every action has a binding, and no binding names two actions", () => {
    const keys = ACTIONS.flatMap((a) => a.keys);
    expect(ACTIONS.every((a) => a.keys.length > 0)).toBe(true);
    expect(new Set(keys).size).toBe(keys.length);
  });

  it("an unbound key runs nothing", () => {
    expect(actionForKey(key("q"))).toBe(null);
  });

  it("an unknown action name is refused with the known ones", () => {
    expect(() => action("fly")).toThrow(
      /^action "fly" is not registered; expected one of \("undo", "redo", /,
    );
  });

  it("labels shortcuts for tooltips", () => {
    expect([
      shortcutLabel(action("undo")),
      shortcutLabel(action("undo"), true),
      shortcutLabel(action("delete")),
    ]).toEqual(["Ctrl+Z", "⌘Z", "Delete"]);
  });
});
