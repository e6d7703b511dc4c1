import { describe, expect, it } from "vitest";
import { afterRefusedNames, type ModelImportJob, progressText } from "./modelImport";
import { ApiError } from "../api/client";
import { exportLinks } from "../ui/exportMenu";

const job = (status: ModelImportJob["status"], step = "", error = ""): ModelImportJob => ({
  id: 1,
  name: "mlp.onnx",
  status,
  step,
  error,
  graph: null,
  weights: null,
  review: true,
  axes: [],
  names: null,
});

describe("progressText", () => {
  it.each([
    ["queued", job("queued"), "Importing mlp.onnx: waiting for a worker…"],
    ["running", job("running", "naming axes"), "Importing mlp.onnx: naming axes…"],
    [
      "review",
      job("review", "waiting for the axes' names"),
      "Read mlp.onnx: name its axes, then create the graph.",
    ],
    ["done", job("done", "storing the graph"), "Imported mlp.onnx."],
    [
      "failed",
      job("failed", "naming axes", "unsupported ONNX operators: Ceil (/f/ceil)"),
      "mlp.onnx was not imported: unsupported ONNX operators: Ceil (/f/ceil)",
    ],
    [
      "expired",
      job(
        "expired",
        "waiting for the axes' names",
        "nobody named its axes within 24 h of the import",
      ),
      "mlp.onnx was not imported: nobody named its axes within 24 h of the import",
    ],
  ])("%s", (_label, given, expected) => {
    expect(progressText(given)).toBe(expected);
  });
});

describe("exportLinks", () => {
  it("links every format to the export endpoint", () => {
    expect(exportLinks("g-1").map((l) => [l.label, l.href])).toEqual([
      ["LoomGraph JSON", "/api/v1/graphs/g-1/export?to=json"],
      ["ONNX", "/api/v1/graphs/g-1/export?to=onnx"],
      ["NumPy script", "/api/v1/graphs/g-1/export?to=numpy"],
      ["einsum strings", "/api/v1/graphs/g-1/export?to=einsum"],
      ["geon builder code", "/api/v1/graphs/g-1/export?to=python"],
    ]);
  });
});

describe("afterRefusedNames", () => {
  const reading = (answer: ModelImportJob | Error) => ({
    get: async () => {
      if (answer instanceof Error) throw answer;
      return answer;
    },
  });
  const review = job("review", "waiting for the axes' names");
  it.each([
    [
      "a bad name",
      new ApiError('the name for axis "d4": axis name "2 heads" is invalid', "invalid_names", 400),
    ],
    [
      "too many imports converting",
      new ApiError("1 of your model imports are still converting", "too_many_imports", 429),
    ],
  ])("keeps the form for %s: the import is still in review", async (_label, error) => {
    await expect(afterRefusedNames(reading(review), 1, error)).resolves.toBe("keep");
  });
  it("reads an expired import again, so its error says why", async () => {
    const expired = job("expired", "", "nobody named its axes within 24 h of the import");
    const refused = new ApiError(
      'model import "mlp.onnx" is expired: nobody named its axes',
      "not_in_review",
      409,
    );
    await expect(afterRefusedNames(reading(expired), 1, refused)).resolves.toEqual(expired);
  });
  it("ends the step with the refusal when the connection is lost", async () => {
    const lost = new TypeError("Failed to fetch");
    await expect(
      afterRefusedNames(reading(new TypeError("Failed to fetch again")), 1, lost),
    ).rejects.toBe(lost);
    // and when the import is still in review (the connection came back), with the refusal too
    await expect(afterRefusedNames(reading(review), 1, lost)).rejects.toBe(lost);
  });
});
