import { describe, expect, it } from "vitest";
import table from "../../../tests/core/axis_rename_cases.json";
import { AuthorError } from "./author";
import { editAxis } from "./authorAxes";
import {
  AXIS,
  INDEX_AXES,
  OPERATION,
  TENSOR,
  TENSOR_AXES,
  type LoomDocument,
  type LoomNode,
} from "./document";
import { applyOps } from "./edits";

// The server's set_axis cases (tests/core/axis_rename_cases.json, run by
// tests/web/test_axis_rename_cases.py on the server's own path): the editor's axis command
// must change the names as the server does, and refuse in the server's words.

interface Graph {
  axes: Record<string, number>;
  tensors: Record<string, string[]>;
  operations: Record<
    string,
    {
      kernel: string;
      inputs: Record<string, string[]>;
      outputs: string[];
      params?: unknown;
      index?: string[];
    }
  >;
}
interface Case {
  name: string;
  graph: string;
  edit: { axis: string; name?: string; length?: number | null };
  expect: {
    nodes?: Record<string, Record<string, unknown>>;
    error?: { code: string; message: string };
  };
}
const { graphs, cases } = table as unknown as { graphs: Record<string, Graph>; cases: Case[] };

/** The document a case's compact graph stands for, as the Python runner builds it. */
function build(g: Graph): LoomDocument {
  const nodes: LoomNode[] = Object.entries(g.axes).map(([name, length]) => ({
    id: name,
    type: AXIS,
    label: name,
    body: { name, length },
  }));
  const extent = (ref: string) =>
    ref.split("*").reduce((n, part) => n * g.axes[part.replace(/[+-][0-9]+$/, "")]!, 1);
  const ranges: Record<string, { start: number[]; end: number[] }> = {};
  for (const [id, axes] of Object.entries(g.tensors)) {
    ranges[id] = { start: axes.map(() => 0), end: axes.map(extent) };
    nodes.push({
      id,
      type: TENSOR,
      label: id,
      body: { dtype: "float32", range: ranges[id] },
      tags: { [TENSOR_AXES]: { axes } },
    });
  }
  const sel = (ids: string[]) => ids.map((tensorId) => ({ tensorId, range: ranges[tensorId]! }));
  for (const [id, op] of Object.entries(g.operations)) {
    const body: Record<string, unknown> = {
      kernel: op.kernel,
      inputs: Object.fromEntries(Object.entries(op.inputs).map(([k, ids]) => [k, sel(ids)])),
      outputs: op.outputs.length ? { result: sel(op.outputs) } : {},
    };
    if (op.params !== undefined) body.params = op.params;
    nodes.push({
      id,
      type: OPERATION,
      label: id,
      body,
      ...(op.index ? { tags: { [INDEX_AXES]: { axes: op.index } } } : {}),
    });
  }
  return { id: "00000000-0000-4000-8000-000000000000", nodes } as LoomDocument;
}

/** What an axis edit may change, per node (as the Python runner reads it). */
function names(doc: LoomDocument): Record<string, Record<string, unknown>> {
  const out: Record<string, Record<string, unknown>> = {};
  for (const n of doc.nodes) {
    const seen: Record<string, unknown> = {};
    if (n.type === AXIS)
      seen.axis = {
        name: n.body.name,
        length: "length" in n.body ? n.body.length : "(absent)",
        label: n.label ?? null,
      };
    for (const [key, url] of [
      ["axes", TENSOR_AXES],
      ["indexAxes", INDEX_AXES],
    ] as const) {
      const tag = n.tags?.[url] as { axes?: unknown } | undefined;
      if (tag !== undefined) seen[key] = tag.axes;
    }
    if (n.type === OPERATION && "params" in n.body) seen.params = n.body.params;
    out[n.id] = seen;
  }
  return out;
}

describe("editAxis does what the server's set_axis does on the shared cases", () => {
  it.each(cases.map((c) => [c.name, c] as const))("%s", (_name, c) => {
    // given the case's graph
    const doc = build(graphs[c.graph]!);
    const before = names(doc);
    const axis = doc.nodes.find((n) => n.type === AXIS && n.body.name === c.edit.axis)!;
    const input = {
      name: c.edit.name ?? c.edit.axis,
      length: "length" in c.edit ? c.edit.length! : (axis.body.length as number),
    };
    if (c.expect.error) {
      // when the command is refused: with the server's code and words
      let refused: unknown;
      try {
        editAxis(doc, axis.id, input);
      } catch (e) {
        refused = e;
      }
      expect(refused).toBeInstanceOf(AuthorError);
      expect([(refused as AuthorError).code, (refused as AuthorError).message]).toEqual([
        c.expect.error.code,
        c.expect.error.message,
      ]);
      return;
    }
    // when the command's ops are applied, then the names are the server's
    const after = applyOps(doc, editAxis(doc, axis.id, input));
    const want = Object.fromEntries(
      Object.entries(before).map(([id, seen]) => [
        id,
        { ...seen, ...(c.expect.nodes?.[id] ?? {}) },
      ]),
    );
    expect(names(after)).toEqual(want);
  });
});
