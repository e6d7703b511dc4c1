"""What does the review step of an import cost the worker, next to what it cost before? (issue 35)

Run: ``.venv/bin/python benchmarks/bench_import_review.py [--repeat 5] [--model PATH]``

An import asked to ``review`` its axes stops with their proposed names. The worker reads them
in the bounded child (:mod:`geon.interop.onnx_bounded`). Baseline (measured in the same run):
what the review step did before, :func:`~geon.interop.onnx_bounded.import_in_child` with
``names=None``, building the whole document and weights and sending them back only to read the
axes (and the worker's ``parse_document`` of it). Now: :func:`review_in_child`, which stops once
the axes and their roles are read. Both under the worker's bounds (GEON_IMPORT_SECONDS 60, 2 GiB
of address space), the committed encoder layer (``tests/interop/models/encoder.onnx``, batch 3)
by default. It prints the best and median wall time of ``--repeat`` tries of each, the bytes the
child sent back, and the in-process time of the importer's part alone (no child start).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ["GEON_DATA_DIR"] = tempfile.mkdtemp(prefix="geon-bench-review-")
os.environ.setdefault("SECRET_KEY", "geon-bench-only")
os.environ["DJANGO_SETTINGS_MODULE"] = "geon.settings"

import django  # noqa: E402 - the settings above come first

django.setup()

BOUNDS = {"max_bytes": 10 * 2**20, "bound": "GEON_MAX_REQUEST_BYTES", "seconds": 60.0,
          "memory": 2 * 2**30}  # fmt: skip


def _times(fn, repeat: int) -> tuple[float, float, object]:  # type: ignore[no-untyped-def]
    out, ts = None, []
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        ts.append(time.perf_counter() - t0)
    return min(ts), statistics.median(ts), out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--model", default=str(ROOT / "tests/interop/models/encoder.onnx"))
    parser.add_argument("--dims", default="batch=3")
    args = parser.parse_args(argv)

    import onnx

    from geon.graphs.services.documents import parse_document
    from geon.interop.onnx_bounded import import_in_child, review_in_child
    from geon.interop.onnx_import import import_onnx, review_onnx

    data = Path(args.model).read_bytes()
    dims = {k: int(v) for k, v in (p.split("=") for p in args.dims.split(",") if p)}
    name = Path(args.model).name

    def before() -> object:
        document, weights, axes = import_in_child(data, name, dims, names=None, **BOUNDS)
        parse_document(document)
        return len(json.dumps(document)) + len(weights), axes

    def after() -> object:
        axes = review_in_child(data, name, dims, **BOUNDS)
        return 0, axes

    b_best, b_med, (b_bytes, b_axes) = _times(before, args.repeat)  # type: ignore[misc]
    a_best, a_med, (_, a_axes) = _times(after, args.repeat)  # type: ignore[misc]
    assert a_axes == b_axes, "the review's axes differ from the full conversion's"
    model = onnx.load_model_from_string(data)
    ib, _, _ = _times(lambda: import_onnx(model, dims=dims), args.repeat)
    rb, _, _ = _times(lambda: review_onnx(model, dims), args.repeat)
    print(f"{name} ({len(data):,} bytes), dims {dims}, {args.repeat} tries, {len(a_axes)} axes")
    print(f"{'review step':44} {'best s':>8} {'median s':>9} {'bytes back':>11}")
    print(f"{'before: import_in_child + parse_document':44} {b_best:8.3f} {b_med:9.3f} "
          f"{b_bytes:11,}")  # fmt: skip
    print(f"{'now: review_in_child (axes only)':44} {a_best:8.3f} {a_med:9.3f} {'axes':>11}")
    print(f"{'in process, before: import_onnx':44} {ib:8.3f}")
    print(f"{'in process, now: review_onnx':44} {rb:8.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
