import { describe, expect, it } from "vitest";
import { type ModelImportJob, progressText } from "./modelImport";
import { exportLinks } from "../ui/exportMenu";

const job = (status: ModelImportJob["status"], step = "", error = ""): ModelImportJob => ({ id: 1, name: "mlp.onnx", status, step, error, graph: null, weights: null, review: true, axes: [], names: null });

describe("progressText", () => {
  it.each([
    ["queued", job("queued"), "Importing mlp.onnx: waiting for a worker…"],
    ["running", job("running", "naming axes"), "Importing mlp.onnx: naming axes…"],
    ["review", job("review", "waiting for the axes' names"), "Read mlp.onnx: name its axes, then create the graph."],
    ["done", job("done", "storing the graph"), "Imported mlp.onnx."],
    ["failed", job("failed", "naming axes", "unsupported ONNX operators: Ceil (/f/ceil)"), "mlp.onnx was not imported: unsupported ONNX operators: Ceil (/f/ceil)"],
    ["expired", job("expired", "waiting for the axes' names", "nobody named its axes within 24 h of the import"), "mlp.onnx was not imported: nobody named its axes within 24 h of the import"],
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
