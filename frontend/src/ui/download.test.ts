import { describe, expect, it } from "vitest";
import { failureText, fileNameOf, linkFileName, plainClick } from "./download";

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
    const refusal = {
      error: {
        code: "export_refused",
        message: 'operation "op:dot → up" holds partial products; switch to a plan without them',
      },
    };
    expect(failureText("Export as ONNX", 400, refusal)).toBe(
      'Export as ONNX failed: operation "op:dot → up" holds partial products; switch to a plan without them',
    );
    expect(failureText("Export as ONNX", 502, null)).toBe(
      "Export as ONNX failed: the server answered 502",
    );
  });

  it.each([
    ["a plain left click", {}, true],
    ["a middle click (a new tab)", { button: 1 }, false],
    ["ctrl-click", { ctrlKey: true }, false],
    ["cmd-click", { metaKey: true }, false],
    ["shift-click", { shiftKey: true }, false],
    ["alt-click (save link as)", { altKey: true }, false],
    ["a click another handler took", { defaultPrevented: true }, false],
  ])(
    "the page fetches the file on %s, else the browser follows the link",
    (_label, changed, expected) => {
      const click = {
        button: 0,
        ctrlKey: false,
        metaKey: false,
        shiftKey: false,
        altKey: false,
        defaultPrevented: false,
        ...changed,
      };
      expect(plainClick(click)).toBe(expected);
    },
  );

  it.each([
    ["the link's download name", "my-mlp.json", "/api/v1/graphs/7/export", "my-mlp.json"],
    [
      "the path's last part when download is empty",
      "",
      "/api/v1/classes/3/progress.csv",
      "progress.csv",
    ],
    [
      "the path's last part when there is no download",
      null,
      "http://h/api/v1/classes/3/progress.csv?x=1",
      "progress.csv",
    ],
    ["a fixed name when neither names a file", null, "/", "download"],
  ])("a link's fallback file name is %s", (_label, download, href, expected) => {
    expect(linkFileName(download, href)).toBe(expected);
  });
});
