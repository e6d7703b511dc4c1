import { describe, expect, it } from "vitest";
import { applyRun, applySnapshot, initialState, parseMessage, type RunInfo, type RunMessage } from "./state";

const run = (id: number, status: RunInfo["status"], progress = 0): RunMessage => ({
  type: "run",
  event: status === "running" ? "progress" : status,
  run: { id, status, progress, error: "", result: {}, workerPid: 7 },
});

describe("applyRun", () => {
  it.each([
    ["one run, every status", [run(1, "queued"), run(1, "running"), run(1, "running", 1), run(1, "done", 1)], ["queued", "running", "done"]],
    ["a newer run starts a new history", [run(1, "queued"), run(1, "done"), run(2, "queued")], ["queued"]],
    ["an older run's late event is ignored", [run(2, "queued"), run(1, "done")], ["queued"]],
  ])("%s", (_label, messages, expected) => {
    const state = messages.reduce(applyRun, initialState());
    expect(state.runStatuses).toEqual(expected);
  });
});

describe("applySnapshot", () => {
  it("takes the document, version, issues and presence", () => {
    const doc = { id: "g", nodes: [] };
    const state = applySnapshot(initialState(), { type: "snapshot", document: doc, version: 3, issues: [], present: [{ user: "ann" }] });
    expect([state.document, state.version, state.issues, state.present]).toEqual([doc, 3, [], [{ user: "ann" }]]);
  });
});

describe("parseMessage", () => {
  it.each([
    ["not JSON", "{", { type: "invalid", reason: "not JSON" }],
    ["unknown type", '{"type": "nope"}', { type: "invalid", reason: 'unknown message type "nope"' }],
    ["no type", "[1]", { type: "invalid", reason: 'unknown message type "undefined"' }],
    ["an error", '{"type": "error", "error": {"code": "c", "message": "m"}}', { type: "error", error: { code: "c", message: "m" } }],
    ["plans changed", '{"type": "plans", "author": "bob"}', { type: "plans", author: "bob" }],
  ])("%s", (_label, data, expected) => {
    expect(parseMessage(data)).toEqual(expected);
  });
});
