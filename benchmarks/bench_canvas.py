"""The editor's canvas on a 2,000-node graph in headless Chromium, next to the floor: a plain
Canvas2D page that only draws the same rectangles and lines, measured in the same run.

    make setup   # builds the editor bundle into geon/static/editor/
    .venv/bin/python benchmarks/bench_canvas.py [--nodes 2000] [--frames 120] [--repeat 3]

The graph is a grid of chains ``t -> op:exp -> t -> op:exp ...`` with axis declarations, every
tensor and operation placed by a ``Layout`` tag (the floor draws exactly those boxes, so layout
time is not part of either figure). Both pages draw on a canvas of the same size (the editor's,
between its side panels); both are served from a local HTTP server and driven by Playwright with
Debian's Chromium (``GEON_CHROMIUM``, default ``/usr/bin/chromium``), with the
frame-rate limit off so a frame takes as long as it needs instead of waiting for vsync.

Rows:

- ``first paint``: from handing the document to the page (already parsed in the page) to the
  end of the first animation frame that shows it;
- ``pan/zoom frame``: the median interval between animation frames while the view pans and zooms
  every frame (``--frames`` frames: zoom in from fit-to-view to 1:1 and pan across the graph);
- ``pan/zoom p95``: the 95th percentile of the same intervals.

Each figure is the median over ``--repeat`` fresh pages; the ratio is editor / floor.
"""

from __future__ import annotations

import argparse
import functools
import http.server
import os
import statistics
import threading
import uuid
from pathlib import Path
from typing import Any

from playwright.sync_api import Page, sync_playwright

ROOT = Path(__file__).resolve().parent.parent
BUNDLE = ROOT / "geon" / "static" / "editor"
PAGES = Path(__file__).resolve().parent / "canvas"
CHROMIUM = os.environ.get("GEON_CHROMIUM", "/usr/bin/chromium")
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-gpu-vsync",
    "--disable-frame-rate-limit",
    "--disable-background-timer-throttling",
    "--disable-renderer-backgrounding",
    "--no-first-run",
]
LOOM = "http://tensortapestry.org/schemas/loom/2024-01/node_types.jsd#/nodes/"
GEON = "urn:geon:2026-11:"


def document(nodes: int) -> dict[str, Any]:
    """Chains of ``tensor -> op:exp -> tensor`` on a grid, every node placed by a Layout tag."""
    out: list[dict[str, Any]] = []
    for name, length in (("H", 8), ("W", 16)):
        out.append(
            {
                "id": str(uuid.uuid4()),
                "type": f"{GEON}node_types.jsd#/nodes/Axis",
                "label": name,
                "body": {"name": name, "length": length},
            }
        )
    chain = 40  # boxes per row: tensor, op, tensor, op, ...
    count = nodes - len(out)
    prev: str | None = None
    for i in range(count):
        row, col = divmod(i, chain)
        node_id = str(uuid.uuid4())
        layout = {f"{GEON}tag_types.jsd#/tags/Layout": {"x": col * 230, "y": row * 110}}
        node: dict[str, Any]
        if col % 2 == 0:
            node = {
                "id": node_id,
                "type": f"{LOOM}Tensor",
                "label": f"t{i}",
                "body": {"dtype": "float32", "range": {"start": [0, 0], "end": [8, 16]}},
                "tags": {f"{GEON}tag_types.jsd#/tags/TensorAxes": {"axes": ["H", "W"]}, **layout},
            }
        else:
            node = {
                "id": node_id,
                "type": f"{LOOM}Operation",
                "label": "op:exp",
                "body": {"kernel": "op:exp", "inputs": {}, "outputs": {}},
                "tags": layout,
            }
        if col % 2 == 1 and prev is not None:
            whole = {"start": [0, 0], "end": [8, 16]}
            node["body"]["inputs"] = {"tensor": [{"tensorId": prev, "range": whole}]}
        if col % 2 == 0 and col > 0 and prev is not None:
            producer = out[-1]
            whole = {"start": [0, 0], "end": [8, 16]}
            producer["body"]["outputs"] = {"result": [{"tensorId": node_id, "range": whole}]}
        out.append(node)
        prev = node_id
    return {"id": str(uuid.uuid4()), "nodes": out}


class Handler(http.server.SimpleHTTPRequestHandler):
    """``/static/editor/*`` from the built bundle, ``/bench/*`` from benchmarks/canvas/."""

    def translate_path(self, path: str) -> str:
        path = path.split("?", 1)[0]
        if path.startswith("/static/editor/"):
            return str(BUNDLE / path.removeprefix("/static/editor/"))
        return str(PAGES / path.removeprefix("/bench/"))

    def log_message(self, format: str, *args: Any) -> None:
        pass


FIRST_PAINT_EDITOR = """async (doc) => {
  const before = window.geon.draws();
  const t0 = performance.now();
  window.geon.loadDocument(doc);
  // the editor paints in its own animation-frame callback, which runs before this one's
  do await new Promise(requestAnimationFrame);
  while (window.geon.draws() === before);
  return performance.now() - t0;
}"""

FIRST_PAINT_FLOOR = """async ([scene, size]) => {
  const t0 = performance.now();
  window.floor.load(scene, size);
  await new Promise(requestAnimationFrame);
  return performance.now() - t0;
}"""

# Every frame: set the next viewport, let the page paint, note the time. The editor paints on
# its own animation frame after setViewport; the floor paints inside setViewport.
FRAMES = """async ([api, frames, bounds, size]) => {
  const target = api === "geon" ? window.geon : window.floor;
  const set = (vp) => target.setViewport(vp);
  const fitScale = Math.min(size.w / bounds.w, size.h / bounds.h);
  const times = [];
  let last = performance.now();
  for (let i = 0; i < frames; i++) {
    const t = i / (frames - 1);
    const scale = fitScale * Math.pow(1 / fitScale, t);     // zoom from fit to 1:1
    const cx = bounds.x + bounds.w * (0.2 + 0.6 * t);       // while panning across
    const cy = bounds.y + bounds.h * (0.5 + 0.3 * Math.sin(t * 6.28));
    set({ scale, dx: size.w / 2 - cx * scale, dy: size.h / 2 - cy * scale });
    await new Promise(requestAnimationFrame);
    const now = performance.now();
    times.push(now - last);
    last = now;
  }
  return times;
}"""


CANVAS_SIZE = """(() => {
  const c = document.querySelector("canvas.geon-canvas");
  return { w: c.clientWidth, h: c.clientHeight };
})()"""


def measure(
    page: Page,
    base: str,
    which: str,
    doc: dict[str, Any],
    scene: dict[str, Any] | None,
    size: dict[str, int] | None,
    frames: int,
) -> dict[str, Any]:
    if which == "editor":
        page.goto(f"{base}/bench/editor.html")
        page.wait_for_function("() => window.geon !== undefined")
        first = page.evaluate(FIRST_PAINT_EDITOR, doc)
        scene = page.evaluate("window.geon.scene()")
        size = page.evaluate(CANVAS_SIZE)
        api = "geon"
    else:
        page.goto(f"{base}/bench/floor.html")
        page.wait_for_function("() => window.floor !== undefined")
        first = page.evaluate(FIRST_PAINT_FLOOR, [scene, size])
        api = "floor"
    assert scene is not None
    xs = [r["x"] for r in scene["rects"]]
    ys = [r["y"] for r in scene["rects"]]
    x1 = max(r["x"] + r["w"] for r in scene["rects"])
    y1 = max(r["y"] + r["h"] for r in scene["rects"])
    bounds = {"x": min(xs), "y": min(ys), "w": x1 - min(xs), "h": y1 - min(ys)}
    times = page.evaluate(FRAMES, [api, frames, bounds, size])[1:]
    times.sort()
    return {
        "first": first,
        "median": statistics.median(times),
        "p95": times[int(len(times) * 0.95) - 1],
        "scene": scene,
        "boxes": len(scene["rects"]),
        "size": size,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=2000)
    parser.add_argument("--frames", type=int, default=120)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    if not (BUNDLE / "editor.js").exists():
        raise SystemExit(f"the editor bundle is missing at {BUNDLE}; build it with `make setup`")
    doc = document(args.nodes)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Handler))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    results: dict[str, list[dict[str, Any]]] = {"editor": [], "floor": []}
    errors: list[str] = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        for _ in range(args.repeat):
            scene = size = None
            for which in ("editor", "floor"):
                context = browser.new_context(
                    viewport={"width": 1280, "height": 800}, device_scale_factor=1
                )
                page = context.new_page()
                page.on("pageerror", lambda e: errors.append(str(e)))
                got = measure(page, base, which, doc, scene, size, args.frames)
                scene, size = got["scene"], got["size"]
                results[which].append(got)
                context.close()
        browser.close()
    server.shutdown()
    if errors:
        raise SystemExit(f"the pages reported errors: {errors}")
    editor, floor = results["editor"], results["floor"]
    es, fs = editor[0]["size"], floor[0]["size"]
    print(
        f"{len(doc['nodes'])} nodes ({editor[0]['boxes']} boxes), {args.frames} frames, "
        f"median of {args.repeat} runs; canvas: editor {es['w']}x{es['h']}, "
        f"floor {fs['w']}x{fs['h']} CSS px"
    )
    print(f"{'':18} {'editor ms':>10} {'floor ms':>10} {'ratio':>7}")
    rows = (("first", "first paint"), ("median", "pan/zoom frame"), ("p95", "pan/zoom p95"))
    for key, label in rows:
        e = statistics.median(r[key] for r in editor)
        f = statistics.median(r[key] for r in floor)
        print(f"{label:18} {e:10.2f} {f:10.2f} {e / f:7.2f}")


if __name__ == "__main__":
    main()
