import { describe, expect, it } from "vitest";
import { failureText, fileNameOf } from "./download";

describe("a download's file name and its failure (issue 35: no silent failures)", () => {
  it.each([
    ["quoted", 'attachment; filename="encoder.onnx"', "encoder.onnx"],
    ["bare", "attachment; filename=graph.json", "graph.json"],
    ["none", "attachment", null],
    ["no header", null, null],
  ])("file name %s", (_label, header, expected) => {
    expect(fileNameOf(header)).toBe(expected);
  });

  it("says the server's reason, else its status", () => {
    const refusal = { error: { code: "export_refused", message: 'operation "op:dot → up" holds partial products; switch to a plan without them' } };
    expect(failureText("Export as ONNX", 400, refusal)).toBe('Export as ONNX failed: operation "op:dot → up" holds partial products; switch to a plan without them');
    expect(failureText("Export as ONNX", 502, null)).toBe("Export as ONNX failed: the server answered 502");
  });
});
