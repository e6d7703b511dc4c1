// The form itself is driven in Chromium: tests/browser/test_import_names.py (no DOM here).
import { describe, expect, it } from "vitest";
import cases from "../../../tests/interop/import_name_cases.json";
import { type ImportAxis, namedAxes, namesProblem } from "./importReview";

const axis = (name: string, length: number, role = "", proposed = name): ImportAxis => ({
  name,
  length,
  role,
  proposed,
  seen: "",
});
const AXES = [
  axis("batch", 3, "batch"),
  axis("d4", 4, "heads", "heads"),
  axis("d32", 32, "hidden", "hidden"),
  axis("d1_43", 1),
  axis("d1_44", 1),
];

// The server's cases (tests/interop/import_name_cases.json, run by
// tests/interop/test_import_name_cases.py on geon.interop.onnx_roles.check_names): the table
// refuses what the server refuses, word for word.
const CASE_AXES: ImportAxis[] = cases.axes.map(([name, length, role, proposed]) =>
  axis(String(name), Number(length), String(role), String(proposed)),
);

/** The axes a refusal is about: 'the name for axis "d4": …' or 'given to axes "d4" and "d32"'. */
const named = (message: string): string[] => {
  const own = /^the name for axis "([^"]+)": /.exec(message);
  if (own) return [own[1]];
  const pair = /given to axes "([^"]+)" and "([^"]+)";/.exec(message);
  return pair ? [pair[1], pair[2]] : [];
};

describe("namesProblem (shared with the server)", () => {
  it.each(cases.cases.map((c) => [c.label, c] as const))("%s", (_label, c) => {
    // given the case's names; when the one check reads them
    const { refusal, byAxis } = namesProblem(CASE_AXES, c.names as Record<string, string>);
    // then it refuses what the server refuses, word for word, and the table shows that refusal on
    // each axis it names (nothing at all when the server takes the names)
    expect(refusal).toBe(c.message);
    if (c.message)
      expect(named(c.message).map((a) => byAxis.get(a))).toEqual(
        named(c.message).map(() => c.message),
      );
    else expect([...byAxis]).toEqual([]);
  });
});

describe("namesProblem, each axis's error in the table", () => {
  const shown = { batch: "batch", d4: "heads", d32: "hidden" };
  it.each([
    ["a good name", "d4", { ...shown, d4: "h" }, ""],
    [
      "not an axis name",
      "d4",
      { ...shown, d4: "2 heads" },
      'the name for axis "d4": axis name "2 heads" is invalid; expected a letter or "_" followed by letters, digits or "_"',
    ],
    [
      "too long",
      "d4",
      { ...shown, d4: "x".repeat(129) },
      `the name for axis "d4": axis name "${"x".repeat(40)}... (129 characters)" is too long; expected at most 128 characters`,
    ],
    [
      "one name twice, on the later axis",
      "d32",
      { ...shown, d32: "heads" },
      'name "heads" is given to axes "d4" and "d32"; expected one name per axis',
    ],
    [
      "one name twice, on the earlier axis",
      "d4",
      { ...shown, d4: "hidden" },
      'name "hidden" is given to axes "d4" and "d32"; expected one name per axis',
    ],
    [
      "a hidden length-1 axis's name",
      "d32",
      { ...shown, d32: "d1_44" },
      'name "d1_44" is given to axes "d32" and "d1_44"; expected one name per axis',
    ],
  ])("%s", (_label, key, names, expected) => {
    expect(namesProblem(AXES, names).byAxis.get(key) ?? "").toBe(expected);
  });
  it("says nothing of an axis the clash is not about", () => {
    expect(namesProblem(AXES, { ...shown, d32: "heads" }).byAxis.has("batch")).toBe(false);
  });
  it("says each axis's own bad name before a clash it is in, on every axis it names", () => {
    // given two axes both named "2 heads" (bad, and one name twice) and a third clashing with d32
    const names = { batch: "2 heads", d4: "2 heads", d32: "d1_43" };
    // when checked
    const { refusal, byAxis } = namesProblem(AXES, names);
    // then each bad name is said on its own axis, the clash with the hidden axis on d32
    const bad = (a: string) =>
      `the name for axis "${a}": axis name "2 heads" is invalid; expected a letter or "_" followed by letters, digits or "_"`;
    expect(refusal).toBe(bad("batch"));
    expect(Object.fromEntries(byAxis)).toEqual({
      batch: bad("batch"),
      d4: bad("d4"),
      d32: 'name "d1_43" is given to axes "d32" and "d1_43"; expected one name per axis',
      d1_43: 'name "d1_43" is given to axes "d32" and "d1_43"; expected one name per axis',
    });
  });
});

describe("namedAxes", () => {
  it("lists the axes longer than 1 and counts the others", () => {
    const { shown, hidden } = namedAxes(AXES);
    expect([shown.map((a) => a.name), hidden]).toEqual([["batch", "d4", "d32"], 2]);
  });
});
