import { describe, expect, it } from "vitest";
import { readRequest, stepView } from "./trainingStep";

describe("the training step menu", () => {
  it("reads the form into a request, or says which field is wrong", () => {
    expect(readRequest("adam", " 0.001 ", " loss ")).toEqual({
      optimizer: "adam",
      lr: 0.001,
      loss: "loss",
    });
    expect(readRequest("lion", "0.1", "loss")).toBe(
      'optimizer "lion" is unknown; expected one of sgd, momentum, adam',
    );
    expect(readRequest("sgd", "0", "loss")).toBe(
      'learning rate "0" is invalid; expected a number in (0, 1e6]',
    );
    expect(readRequest("sgd", "fast", "loss")).toBe(
      'learning rate "fast" is invalid; expected a number in (0, 1e6]',
    );
    expect(readRequest("sgd", "0.1", "  ")).toBe(
      "the loss label is empty; expected the label of a scalar tensor, e.g. loss",
    );
  });

  it("collapses the backward pass and the update for the forward-only view, keeping other groups as they were", () => {
    const before = new Set(["/layer/attn"]);
    const forward = stepView(before, true);
    expect([...forward].sort()).toEqual(["/backward", "/layer/attn", "/optimizer"]);
    expect([...stepView(forward, false)]).toEqual(["/layer/attn"]);
    expect([...before]).toEqual(["/layer/attn"]);
  });
});
