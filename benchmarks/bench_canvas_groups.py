"""The editor on an imported encoder stack grouped by name scope (96 layers by default: 4,896
operations), next to the floor (a plain Canvas2D page that only draws the same rectangles and
lines), measured in the same run. Issue 20: "aim <= 2x"; issue 34: "opening collapsed <= 2x the
floor's first paint; expanding one layer <= 100 ms; expand all <= 10x the floor; pan/zoom p95 <= 16
ms; layout incremental (only the groups that changed), positions stable when a group opens or
closes".

    make setup   # builds the editor bundle into geon/static/editor/
    .venv/bin/python benchmarks/bench_canvas_groups.py [--layers 96] [--repeat 3]

The document is real import output: the committed PyTorch encoder layer
(``tests/interop/models/encoder.onnx``) chained ``--layers`` times in ONNX (layer ``i``'s node
scopes become ``/layers.i/...``, its output feeds layer ``i + 1``), then imported by
``geon.interop.onnx_import`` (612 operations and 745 tensors for 12 layers). It has no Layout
tags, so the editor lays it out: with more than 60 operations it opens collapsed to its
top-level scopes, and the layout worker places the collapsed groups and the tensors between
them (a level that is one path, as a collapsed stack is, without ELK; every other level with
it). The pages, the server and the browser flags are bench_canvas.py's.

Rows (each figure the median over ``--repeat`` fresh pages; ratio = editor / floor):

- ``first paint, collapsed``: from handing the parsed document to the editor to the end of the
  first frame that draws every box in its laid-out place (the view, the scope tree, the grouped
  view, the layout worker's round trip and the paint; the panels follow a frame later). The page
  is opened and left idle for 300 ms first, as the editor's websocket snapshot arrives after the
  page has loaded. Two floors, measured in the same run: the same boxes and edges the editor
  draws collapsed (``same boxes``), and every box of the graph laid out with its groups
  expanded (``whole graph``: what a plain canvas draws to show this graph without collapsing);
- ``expand one layer``: from toggling a middle layer open (``window.geonGroups.toggle``) to
  the end of the first frame with its contents in place (a layer shaped like one laid out before
  takes its places at once; else it is drawn at once with a provisional layout, and only that
  layer's block is laid out by ELK, in the worker), against the floor drawing the boxes of that
  state: once at once after the first paint (the worker may still be laying out ahead the blocks
  a click opens next), once after the page was left idle for ``IDLE_MS``; ``ELK's layout in
  place``: the same to the first frame after ELK's layout replaced the provisional one
  (``window.geonGroups.provisional()``); ``collapse it again``: the same for closing the second
  (no layout at all). After each close every box must be back exactly where it was: the run
  stops if any moved (``positions stable``);
- ``expand all``: from clicking "Expand all" to the end of the first frame that draws the whole
  graph laid out group by group, against the floor drawing the same boxes and frames;
- ``pan/zoom frame`` and ``pan/zoom p95``: bench_canvas.py's frames (zoom from fit to 1:1 while
  panning across) over the whole graph expanded, against the floor panning the same scene.

Each floor draws exactly the editor's rectangles and edges of that state
(``window.geon.scene()``) on a canvas of the same size, as bench_canvas.py's floor does.
"""

from __future__ import annotations

import argparse
import functools
import http.server
import statistics
import threading
from typing import Any

from bench_canvas import ARGS, BUNDLE, CANVAS_SIZE, CHROMIUM, FIRST_PAINT_FLOOR, FRAMES, Handler
from canvas.stack import stacked_encoder
from playwright.sync_api import Page, sync_playwright


def document(layers: int) -> dict[str, Any]:
    """The imported document of the stack (batch of 2)."""
    import json

    from geon.interop.onnx_import import import_onnx

    doc = import_onnx(stacked_encoder(layers), dims={"batch": 2}).graph.to_json()
    return json.loads(doc) if isinstance(doc, str) else doc


FIRST_PAINT = """async (doc) => {
  await new Promise((done) => setTimeout(done, 300));
  const t0 = performance.now();
  window.geon.loadDocument(doc);
  while (window.geonGroups.laidOutAt() === null) await new Promise(requestAnimationFrame);
  return window.geonGroups.laidOutAt() - t0;
}"""

EXPAND_ALL = """async () => {
  const t0 = performance.now();
  const buttons = [...document.querySelectorAll(".geon-groups-bar button")];
  buttons.find((b) => b.textContent === "Expand all").click();
  while (window.geonGroups.laidOutAt() === null) await new Promise(requestAnimationFrame);
  return window.geonGroups.laidOutAt() - t0;
}"""


#: How long the page is left idle before the second layer is opened (a person looks first).
IDLE_MS = 1000

TOGGLE = """async (path) => {
  const t0 = performance.now();
  window.geonGroups.toggle(path);
  while (window.geonGroups.laidOutAt() === null) await new Promise(requestAnimationFrame);
  const shown = window.geonGroups.laidOutAt() - t0;
  while (window.geonGroups?.provisional()) await new Promise(requestAnimationFrame);
  return [shown, performance.now() - t0];
}"""


def moved(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """The boxes of ``before`` that ``after`` draws elsewhere (or not at all)."""
    at = {r["id"]: r for r in after["rects"]}
    keys = ("x", "y", "w", "h")
    return [
        r["id"]
        for r in before["rects"]
        if r["id"] not in at or any(abs(r[k] - at[r["id"]][k]) > 1e-6 for k in keys)
    ]


def bounds(scene: dict[str, Any]) -> dict[str, float]:
    rects = scene["rects"]
    x0 = min(r["x"] for r in rects)
    y0 = min(r["y"] for r in rects)
    x1 = max(r["x"] + r["w"] for r in rects)
    y1 = max(r["y"] + r["h"] for r in rects)
    return {"x": x0, "y": y0, "w": x1 - x0, "h": y1 - y0}


def frames(
    page: Page, api: str, scene: dict[str, Any], size: dict[str, int], count: int
) -> list[float]:
    times = sorted(page.evaluate(FRAMES, [api, count, bounds(scene), size])[1:])
    return [statistics.median(times), times[int(len(times) * 0.95) - 1]]


def open_close(page: Page, layer: str, before: dict[str, Any]) -> tuple[list[float], float, Any]:
    """Open ``layer`` and close it again: the times it took to show opened and to take ELK's
    layout, the time to close, and the scene opened; every box must be back in its place."""
    one = page.evaluate(TOGGLE, layer)
    opened = page.evaluate("window.geon.scene()")
    close = page.evaluate(TOGGLE, layer)[0]
    away = moved(before, page.evaluate("window.geon.scene()"))
    if away:
        raise SystemExit(f"opening and closing {layer} moved {len(away)} boxes, first {away[:3]}")
    return one, close, opened


def editor_run(
    page: Page, base: str, doc: dict[str, Any], layers: int, count: int
) -> dict[str, Any]:
    page.goto(f"{base}/bench/editor.html")
    page.wait_for_function("() => window.geon !== undefined && window.geonGroups !== undefined")
    first = page.evaluate(FIRST_PAINT, doc)
    collapsed = page.evaluate("window.geon.scene()")
    groups = page.evaluate("window.geonGroups.list()")
    size = page.evaluate(CANVAS_SIZE)
    # at once after the first paint (the worker may still be laying out ahead), then after a
    # second of looking at the graph
    at_once, _, _ = open_close(page, f"/layers.{layers // 2}", collapsed)
    page.wait_for_timeout(IDLE_MS)
    one, close, opened = open_close(page, f"/layers.{layers // 2 + 1}", collapsed)
    expand = page.evaluate(EXPAND_ALL)
    expanded = page.evaluate("window.geon.scene()")
    pan = frames(page, "geon", expanded, size, count)
    return {
        "first": first,
        "at_once": at_once[0],
        "at_once_elk": at_once[1],
        "one": one[0],
        "one_elk": one[1],
        "close": close,
        "expand": expand,
        "pan": pan[0],
        "p95": pan[1],
        "collapsed": collapsed,
        "opened": opened,
        "expanded": expanded,
        "size": size,
        "groups": groups,
    }


def floor_run(page: Page, base: str, scene: dict[str, Any], size: dict[str, int]) -> float:
    page.goto(f"{base}/bench/floor.html")
    page.wait_for_function("() => window.floor !== undefined")
    return float(page.evaluate(FIRST_PAINT_FLOOR, [scene, size]))


def floor_frames(
    page: Page, base: str, scene: dict[str, Any], size: dict[str, int], count: int
) -> list[float]:
    floor_run(page, base, scene, size)
    return frames(page, "floor", scene, size, count)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", type=int, default=96)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--frames", type=int, default=120)
    args = parser.parse_args()
    if not (BUNDLE / "editor.js").exists():
        raise SystemExit(f"the editor bundle is missing at {BUNDLE}; build it with `make setup`")
    doc = document(args.layers)
    kinds = [n["type"].rsplit("/", 1)[-1] for n in doc["nodes"]]
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Handler))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    keys = ("first", "floor", "at_once", "at_once_elk", "one", "one_elk", "close", "floor_one")
    keys += ("expand", "floor_all")
    rows: dict[str, list[float]] = {k: [] for k in (*keys, "pan", "p95", "floor_pan", "floor_p95")}
    errors: list[str] = []
    last: dict[str, Any] = {}
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)

        def fresh() -> Any:
            context = browser.new_context(
                viewport={"width": 1280, "height": 800}, device_scale_factor=1
            )
            page = context.new_page()
            page.on("pageerror", lambda e: errors.append(str(e)))
            return context, page

        for _ in range(args.repeat):
            context, page = fresh()
            last = editor_run(page, base, doc, args.layers, args.frames)
            context.close()
            for key in ("first", "at_once", "at_once_elk", "one", "one_elk", "close", "expand"):
                rows[key].append(last[key])
            for key in ("pan", "p95"):
                rows[key].append(last[key])
            floors = (
                ("floor", last["collapsed"]),
                ("floor_one", last["opened"]),
                ("floor_all", last["expanded"]),
            )
            for key, scene in floors:
                context, page = fresh()
                rows[key].append(floor_run(page, base, scene, last["size"]))
                context.close()
            context, page = fresh()
            pan = floor_frames(page, base, last["expanded"], last["size"], args.frames)
            rows["floor_pan"].append(pan[0])
            rows["floor_p95"].append(pan[1])
            context.close()
        browser.close()
    server.shutdown()
    if errors:
        raise SystemExit(f"the pages reported errors: {errors}")
    collapsed = sum(1 for g in last["groups"] if g["collapsed"])
    print(
        f"{args.layers} encoder layers imported: {kinds.count('Operation')} operations, "
        f"{kinds.count('Tensor')} tensors; opened with {collapsed} collapsed groups "
        f"({len(last['collapsed']['rects'])} rects drawn), expanded "
        f"{len(last['expanded']['rects'])} rects; canvas {last['size']['w']}x"
        f"{last['size']['h']} CSS px; median of {args.repeat} runs; two layers opened and "
        "closed again: every box back in its place each time"
    )
    print(f"{'':40} {'editor ms':>10} {'floor ms':>10} {'ratio':>7}")
    for label, e_key, f_key in (
        ("first paint, collapsed (same boxes)", "first", "floor"),
        ("first paint, collapsed (whole graph)", "first", "floor_all"),
        ("expand one layer, at first paint", "at_once", "floor_one"),
        ("  ... ELK's layout in place", "at_once_elk", "floor_one"),
        (f"expand one layer, {IDLE_MS} ms later", "one", "floor_one"),
        ("  ... ELK's layout in place", "one_elk", "floor_one"),
        ("collapse it again", "close", "floor"),
        ("expand all", "expand", "floor_all"),
        ("pan/zoom frame, expanded", "pan", "floor_pan"),
        ("pan/zoom p95, expanded", "p95", "floor_p95"),
    ):
        e = statistics.median(rows[e_key])
        f = statistics.median(rows[f_key])
        print(f"{label:40} {e:10.2f} {f:10.2f} {e / f:7.2f}")


if __name__ == "__main__":
    main()
