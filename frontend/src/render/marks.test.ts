import { describe, expect, it } from "vitest";
import { graphView, OPERATION, TENSOR, type LoomDocument, type LoomNode } from "../model/document";
import { defaultCollapsed, GROUP, groupedView, groupId, scopeTree } from "./groups";
import { LiveLayout } from "./liveLayout";
import { focusEdge, namedStages, stageBands, type EdgeHost } from "./marks";
import { bounds, toScreen, type Rect } from "./viewport";

const whole = { start: [0], end: [2] };
const tensor = (id: string): LoomNode => ({
  id,
  type: TENSOR,
  label: id,
  body: { dtype: "float32", range: whole },
});
const op = (id: string, ins: string[], outs: string[], scope: string): LoomNode => ({
  id,
  type: OPERATION,
  label: id,
  body: {
    kernel: "op:add",
    inputs: { x: ins.map((tensorId) => ({ tensorId, range: whole })) },
    outputs: { result: outs.map((tensorId) => ({ tensorId, range: whole })) },
  },
  tags: { [GROUP]: { scope } },
});

// four layers in a chain, layer 1 with an attention part: layers.<i> as pipeline_docs.chain scopes them
const doc: LoomDocument = {
  id: "chain",
  nodes: [
    tensor("x"),
    tensor("h0"),
    tensor("h1"),
    tensor("a1"),
    tensor("h2"),
    tensor("h3"),
    op("l0", ["x"], ["h0"], "layers.0"),
    op("att", ["h0"], ["a1"], "layers.1/attn"),
    op("l1", ["a1"], ["h1"], "layers.1"),
    op("l2", ["h1"], ["h2"], "layers.2"),
    op("l3", ["h2"], ["h3"], "layers.10"),
  ],
};
const tree = scopeTree(doc);
const view = graphView(doc);
/** A rect per group, 100 apart, as a layout would place them. */
const rectsOf = (ids: string[]): Map<string, Rect> =>
  new Map(ids.map((id, i) => [id, { x: i * 100, y: 0, w: 80, h: 40 }]));

describe("pipeline stage bands", () => {
  it("covers each stage's groups, matching scopes by path component as the server does", () => {
    // given every group expanded, stage 0 = layers.0 and layers.1, stage 1 = layers.1 (by prefix: not layers.10) and layers.2
    const grouped = groupedView(view, tree, new Set());
    const rects = rectsOf(grouped.groups.map((g) => g.id));
    const bands = stageBands(
      [["layers.0", "/layers.1/"], ["layers.2"], ["layers.3"]],
      grouped.groups,
      rects,
    );
    // then stage 0 holds the two layers' frames (layers.1's attention part adds no rect of its own), stage 1 layers.2 only,
    // and stage 2 (nothing drawn for it) has no band
    expect(bands.map((b) => [b.label, b.rects.length])).toEqual([
      ["stage 0", 2],
      ["stage 1", 1],
    ]);
    const layer2 = rects.get(groupId("/layers.2"))!;
    expect(bands[1]!.rects[0]).toEqual({
      x: layer2.x - 12,
      y: layer2.y - 12,
      w: layer2.w + 24,
      h: layer2.h + 24,
    });
  });

  it("covers a collapsed group that holds a stage's deeper scope", () => {
    // given layers.1 collapsed, a stage naming its attention part
    const grouped = groupedView(view, tree, new Set(["/layers.1"]));
    const bands = stageBands(
      [["layers.1/attn"]],
      grouped.groups,
      rectsOf(grouped.groups.map((g) => g.id)),
    );
    // then the band covers the collapsed box
    expect(bands).toHaveLength(1);
    expect(bands[0]!.rects).toHaveLength(1);
  });

  it("reads the stages a plan names, and none for balanced stages or no pipeline", () => {
    expect(namedStages({ pipeline: { stages: [["layers.0"], ["layers.1"]] } })).toEqual([
      ["layers.0"],
      ["layers.1"],
    ]);
    expect(namedStages({ pipeline: { stages: "balanced" } })).toBeNull();
    expect(namedStages({ pipeline: null })).toBeNull();
    expect(namedStages(null)).toBeNull();
  });
});

describe("showing an edge", () => {
  /** An editor of ``doc`` with every group collapsed (no worker here: the grid layout places boxes at once). */
  function host(): EdgeHost & {
    selected: string[];
    targets: (readonly string[])[];
    aims: (readonly string[])[];
  } {
    const live = new LiveLayout(() => undefined, { initial: (t) => defaultCollapsed(t, 100) });
    live.show(doc);
    const h = {
      live,
      selected: [] as string[],
      targets: [] as (readonly string[])[],
      aims: [] as (readonly string[])[],
      vp: { scale: 0.1, dx: -4000, dy: -4000 },
      groups: {
        set: (next: Set<string>, target: readonly string[]) => (
          h.targets.push(target),
          live.setCollapsed(next)
        ),
        aim: (ids: readonly string[]) => void h.aims.push(ids),
      },
      size: () => ({ width: 800, height: 600 }),
      setSelection: (ids: string[]) => void (h.selected = ids),
      invalidate: () => undefined,
    };
    return h;
  }

  it("selects both ends, marks the edge and centres it, readable, when both are drawn", () => {
    // given every group expanded, the view far from the edge h0 -> att
    const h = host();
    h.live.setCollapsed(new Set());
    // when it is shown
    focusEdge(h, ["h0", "att"]);
    // then both ends are selected, the edge marked, and centred at a readable scale, with no group toggled
    expect(h.selected).toEqual(["h0", "att"]);
    expect(h.live.marks.highlight).toEqual({ from: "h0", to: "att" });
    const span = toScreen(
      bounds([h.live.layout.rects.get("h0")!, h.live.layout.rects.get("att")!]),
      h.vp,
    );
    expect([span.x + span.w / 2, span.y + span.h / 2]).toEqual([400, 300]);
    expect(h.vp.scale).toBeGreaterThanOrEqual(0.6);
    expect(h.targets).toEqual([]);
    expect(h.aims).toEqual([]);
  });

  it("centres again once a layout on its way arrives, as it may move the ends", () => {
    // given every group expanded, and a box not yet laid out (a new version's, ELK still working)
    const h = host();
    h.live.setCollapsed(new Set());
    const rects = new Map(h.live.layout.rects);
    rects.delete("h1");
    h.live.layout = { rects };
    expect(h.live.complete).toBe(false);
    // when the edge h0 -> att is shown
    focusEdge(h, ["h0", "att"]);
    // then it is centred now on the places it has, and aimed at again for when the layout arrives
    const span = toScreen(bounds([rects.get("h0")!, rects.get("att")!]), h.vp);
    expect([span.x + span.w / 2, span.y + span.h / 2]).toEqual([400, 300]);
    expect(h.aims).toEqual([["h0", "att"]]);
  });

  it("reveals ends hidden in collapsed groups first, and centres on the edge once laid out", () => {
    // given every group collapsed: the attention operation is hidden in layers.1 (and layers.1/attn)
    const h = host();
    expect(h.live.grouped!.hiddenIn.get("att")).toBe(groupId("/layers.1"));
    // when its edge from h0 is shown
    focusEdge(h, ["h0", "att"]);
    // then the groups around it open (and no others), both ends are drawn and selected
    expect(h.targets).toEqual([["h0", "att"]]);
    expect([...h.live.collapsed].sort()).toEqual(["/layers.0", "/layers.10", "/layers.2"]);
    expect(["h0", "att"].every((id) => !h.live.grouped!.hiddenIn.has(id))).toBe(true);
    expect(h.selected).toEqual(["h0", "att"]);
  });
});
