import { describe, expect, it } from "vitest";
import type { Issue } from "./document";
import type { RunInfo, RunMessage } from "../sync/protocol";
import { applyRun, countIssues, initialState } from "./state";

// the fields of a run that applyRun does not read
const RUN = {
  graphId: "g",
  version: 1,
  backend: "numpy",
  sharded: false,
  plan: null,
  seed: null,
  uploadedInputs: false,
  step: null,
  created: "",
  started: null,
  finished: null,
  timings: {},
  max_abs_diff: null,
  results: null,
};

const run = (id: number, status: RunInfo["status"], progress = 0): RunMessage => ({
  type: "run",
  event: status === "running" ? "progress" : status,
  run: { ...RUN, id, status, progress, error: "", result: {}, workerPid: 7 },
});

describe("applyRun", () => {
  it.each([
    [
      "one run, every status",
      [run(1, "queued"), run(1, "running"), run(1, "running", 1), run(1, "done", 1)],
      ["queued", "running", "done"],
    ],
    [
      "a newer run starts a new history",
      [run(1, "queued"), run(1, "done"), run(2, "queued")],
      ["queued"],
    ],
    ["an older run's late event is ignored", [run(2, "queued"), run(1, "done")], ["queued"]],
  ])("%s", (_label, messages, expected) => {
    const state = messages.reduce(applyRun, initialState());
    expect(state.runStatuses).toEqual(expected);
  });
});

describe("countIssues", () => {
  const issue = (severity: string) =>
    ({ constraint: "C", type: "T", severity, summary: "", message: "", nodeIds: [] }) as Issue;
  it.each([
    [
      "the list when the server sends no counts",
      [issue("error"), issue("warning"), issue("error")],
      null,
      [],
      { error: 2, warning: 1 },
    ],
    [
      "the server's counts when the list is cut",
      [issue("error")],
      { error: 5312, warning: 7 },
      [],
      { error: 5312, warning: 7 },
    ],
    [
      "plus the editor's predictions",
      [issue("error")],
      { error: 200, warning: 0 },
      [issue("error")],
      { error: 201, warning: 0 },
    ],
  ])("%s", (_label, issues, server, extra, expected) => {
    expect(countIssues(issues, server, extra)).toEqual(expected);
  });
});
