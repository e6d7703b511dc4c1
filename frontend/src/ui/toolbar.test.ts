import { describe, expect, it } from "vitest";
import { connectionText, describeOutputs, issuesText } from "./toolbar";

const out = (label: string, shape: number[], sum?: number) => ({
  label,
  shape,
  dtype: "float64",
  sum,
});

describe("describeOutputs", () => {
  it.each([
    ["no outputs", {}, ""],
    [
      "one output",
      { outputs: [out("y", [4, 2], 3.14159265)] },
      "outputs: y 4×2 float64, sum 3.14159",
    ],
    ["a scalar without a sum", { outputs: [out("m", [])] }, "outputs: m scalar float64"],
    [
      "more than three",
      { outputs: [out("a", [1], 1), out("b", [1], 2), out("c", [1], 3), out("d", [1], 4)] },
      "outputs: a 1 float64, sum 1; b 1 float64, sum 2; c 1 float64, sum 3 and 1 more",
    ],
  ])("%s", (_label, result, expected) => {
    expect(describeOutputs(result)).toBe(expected);
  });

  it("names the graph's outputs and only counts the intermediates a run kept", () => {
    const result = {
      outputs: [
        { ...out("x", [2], 1), intermediate: true },
        { ...out("h", [2], 2), intermediate: true },
        { ...out("y", [2], 3), intermediate: false },
      ],
    };
    expect(describeOutputs(result)).toBe("outputs: y 2 float64, sum 3 (and 2 intermediates kept)");
  });
});

describe("connectionText", () => {
  const link = { attempts: 1, retryAt: null, lost: false, refused: null };
  const now = 1_000_000;
  it.each([
    ["live", { connection: "open" as const, link, unsaved: 0 }, "live"],
    [
      "the first connection",
      { connection: "connecting" as const, link, unsaved: 0 },
      "connecting…",
    ],
    [
      "waiting to reconnect, edits kept",
      {
        connection: "closed" as const,
        link: { ...link, lost: true, retryAt: now + 2_400 },
        unsaved: 2,
      },
      "connection lost — reconnecting in 3 s… (your 2 unsaved edits are kept)",
    ],
    [
      "waiting, nothing unsaved",
      {
        connection: "closed" as const,
        link: { ...link, lost: true, retryAt: now + 500 },
        unsaved: 0,
      },
      "connection lost — reconnecting in 1 s…",
    ],
    [
      "trying again",
      { connection: "connecting" as const, link: { ...link, lost: true }, unsaved: 1 },
      "connection lost — reconnecting now… (your 1 unsaved edit is kept)",
    ],
    [
      "refused",
      {
        connection: "closed" as const,
        link: { ...link, lost: true, refused: { code: 4404, message: "no access" } },
        unsaved: 1,
      },
      "no access (1 unsaved edit could not be saved)",
    ],
  ])("%s", (_label, state, expected) => {
    expect(connectionText(state, now)).toBe(expected);
  });
});

describe("issuesText", () => {
  it.each([
    [{ error: 0, warning: 0 }, "0 issues", "0 errors, 0 warnings"],
    [{ error: 1, warning: 0 }, "1 issue", "1 error, 0 warnings"],
    [{ error: 5_311, warning: 1 }, "5,312 issues", "5,311 errors, 1 warning"],
  ])("%j", (counts, text, title) => {
    expect(issuesText(counts)).toEqual({ text, title });
  });
});
