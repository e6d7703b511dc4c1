"""What does the worst input of each kind cost the server, next to a normal request? (issue 13)

Run: ``.venv/bin/python benchmarks/bench_hostile.py [--repeat 3]``

It makes a throw-away data folder and SQLite database (or, with ``DATABASE_URL`` set to
PostgreSQL, a throw-away database on that server), signs a user in with Django's test client and
sends, through the real request path (URL routing, middleware, django-ninja, services, checker),
each hostile input that issue 13 found beside the normal request of the same kind:

- ``POST /api/v1/validate`` (no sign-in needed): the loom example (baseline); the same with a
  43 KB axis reference of spaces; a range end of ``10**4000``; 100,000 nested ``[``; and, as a
  kind of its own, 800 identical applications of one operation beside a correct document of as
  many applications (bench_check's 100 operations of 8 shards, the baseline of that size);
- ``POST /api/v1/graphs/<id>/runs``: a correct ``.npz`` of the loom inputs (baseline) and a
  1 MiB ``savez_compressed`` of ``zeros(2**30, uint8)``;
- ``POST /api/v1/graphs/<id>/edits``: a relabel (baseline), a ``shard`` into ``10**12`` parts;
  ``POST /api/v1/graphs/<id>/plans``: a plan over a mesh of ``10**12`` devices;
- ``GET .../plans/<id>/cost`` and ``.../diff/<other>`` (issue 30, finding 7): a plan splitting
  bench_check's 1,000 operations over 8 devices (baseline), and bench_plan_maxima's 5 operations
  of 4,096 rows on 65,536 devices, its cost and its diff against the same plan with its mesh
  axes turned (answered 202 for a worker, whose time ``bench_plan_maxima.py --worker`` prints);
- ``POST /api/v1/imports`` then the worker's task (``import_model``, in this process as the worker
  runs it: the conversion in its bounded child process), then ``GET`` the import: the MLP of
  ``tests/interop/models`` (baseline), the encoder layer, and issue 30's bombs: a ``Loop`` of
  2**62 iterations, a ``Pad`` of a 2x2 constant to 20,002 x 20,002, a chain of 150,000 ``Relu``.
  The memory column is this process's only (the child's is bounded by
  ``GEON_IMPORT_MAX_MEMORY_BYTES``).

For each it prints the status, the best wall time of ``--repeat`` tries, the peak of Python and
NumPy allocations during the request (``tracemalloc``), the answer's size, and the time and
memory as ratios to the baseline of its kind measured in the same run. The figures are printed,
not enforced (the tests in ``tests/hostile/`` bound the work itself: issues, bytes, items).
"""

from __future__ import annotations

import argparse
import copy
import io
import json
import os
import sys
import tempfile
import time
import tracemalloc
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
os.environ["GEON_DATA_DIR"] = tempfile.mkdtemp(prefix="geon-bench-hostile-")
os.environ.setdefault("SECRET_KEY", "geon-bench-only")
os.environ["ALLOWED_HOSTS"] = "testserver"  # Django's test client
os.environ["DJANGO_SETTINGS_MODULE"] = "geon.settings"

from throwaway import drop_database, throwaway_database  # noqa: E402

SERVER = throwaway_database("geon_bench_hostile")

import django  # noqa: E402

django.setup()

from django.contrib.auth.models import User  # noqa: E402
from django.core.files.uploadedfile import SimpleUploadedFile  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.test import Client  # noqa: E402

from geon.graphs.services import do_create_graph  # noqa: E402

API = "/api/v1"
LOOM = json.loads((ROOT / "geon" / "examples" / "loom_sharded_add.json").read_text("utf-8"))
TENSOR_AXES = "urn:geon:2026-11:tag_types.jsd#/tags/TensorAxes"


def of_type(document: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [n for n in document["nodes"] if n["type"].endswith(f"/{kind}")]


def long_axis_reference() -> dict[str, Any]:
    """The loom example with an axis reference of ``"A" + 40,000 spaces + "!"`` (finding 1)."""
    document = copy.deepcopy(LOOM)
    of_type(document, "Tensor")[0]["tags"] = {TENSOR_AXES: {"axes": ["A" + " " * 40_000 + "!"]}}
    return document


def identical_applications(n: int) -> dict[str, Any]:
    """The loom example with ``n`` copies of its first application (finding 2)."""
    document = copy.deepcopy(LOOM)
    first = of_type(document, "Application")[0]
    document["nodes"] = [n for n in document["nodes"] if not n["type"].endswith("/Application")]
    for _ in range(n):
        document["nodes"].append({**copy.deepcopy(first), "id": str(uuid.uuid4())})
    return document


def huge_range_end() -> dict[str, Any]:
    """The loom example with a tensor range end of ``10**4000`` (finding 8)."""
    document = copy.deepcopy(LOOM)
    of_type(document, "Tensor")[0]["body"]["range"]["end"][0] = 10**4000
    return document


def npz(**arrays: np.ndarray[Any, Any]) -> bytes:
    buffer = io.BytesIO()
    np.savez_compressed(buffer, **arrays)  # type: ignore[arg-type]
    return buffer.getvalue()


def model_bytes(nodes: list[Any], x: list[int], y: list[int]) -> bytes:
    from onnx import TensorProto, helper

    g = helper.make_graph(
        nodes, "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, x)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, y)],
    )  # fmt: skip
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    return bytes(model.SerializeToString())


def import_bombs() -> dict[str, bytes]:
    """Issue 30's hostile models (findings 3 and 4), as tests/hostile/test_onnx_bombs.py builds
    them."""
    from onnx import TensorProto, helper, numpy_helper

    def const(name: str, value: Any) -> Any:
        return helper.make_node("Constant", [], [name], value=numpy_helper.from_array(value))

    vi = helper.make_tensor_value_info
    body = helper.make_graph(
        [helper.make_node("Add", ["acc", "one"], ["acc_out"]),
         helper.make_node("Identity", ["cond"], ["cond_out"])],
        "body",
        [vi("i", TensorProto.INT64, []), vi("cond", TensorProto.BOOL, []),
         vi("acc", TensorProto.FLOAT, [1])],
        [vi("cond_out", TensorProto.BOOL, []), vi("acc_out", TensorProto.FLOAT, [1])],
        initializer=[numpy_helper.from_array(np.ones(1, np.float32), "one")],
    )  # fmt: skip
    loop = [
        const("trips", np.array(2**62, np.int64)), const("go", np.array(True)),
        const("zero", np.zeros(1, np.float32)),
        helper.make_node("Loop", ["trips", "go", "zero"], ["count"], body=body, name="/loop"),
        helper.make_node("Add", ["x", "count"], ["y"]),
    ]  # fmt: skip
    pad = [
        const("small", np.ones((2, 2), np.float32)),
        const("pads", np.array([0, 0, 20_000, 20_000], np.int64)),
        helper.make_node("Pad", ["small", "pads"], ["big"], name="/pad"),
        helper.make_node("Add", ["x", "big"], ["y"]),
    ]
    n = 150_000
    names = ["x", *(f"v{i}" for i in range(n - 1)), "y"]
    chain = [helper.make_node("Relu", [names[i]], [names[i + 1]]) for i in range(n)]
    return {
        "loop": model_bytes(loop, [1], [1]),
        "pad": model_bytes(pad, [1, 1], [20_002, 20_002]),
        "chain": model_bytes(chain, [2], [2]),
    }


def measure(send: Callable[[], Any], repeat: int) -> dict[str, Any]:
    """Best time, peak traced allocation and the answer of ``send()``."""
    best, peak, answer = float("inf"), 0, None
    for _ in range(repeat):
        tracemalloc.start()
        began = time.perf_counter()
        answer = send()
        elapsed = time.perf_counter() - began
        peak = max(peak, tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
        best = min(best, elapsed)
    assert answer is not None
    return {"status": answer.status_code, "s": best, "peak": peak, "bytes": len(answer.content)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    call_command("migrate", verbosity=0)
    user = User.objects.create_user("bench", password="bench-only-password")
    client = Client()
    client.force_login(user)
    graph = do_create_graph(owner=user, title="loom", document=LOOM)
    operation = of_type(LOOM, "Operation")[0]["id"]
    inputs = {label: np.zeros((10, 5), np.int32) for label in ("t0", "t1")}  # loom's inputs
    bomb = npz(bomb=np.zeros(2**30, np.uint8))

    def post_json(path: str, body: Any) -> Callable[[], Any]:
        text = body if isinstance(body, str) else json.dumps(body)
        return lambda: client.post(path, text, content_type="application/json")

    def upload(content: bytes) -> Callable[[], Any]:
        return lambda: client.post(
            f"{API}/graphs/{graph.pk}/runs",
            {"inputs": SimpleUploadedFile("in.npz", content, "application/octet-stream")},
        )

    def edit(op: dict[str, Any]) -> Callable[[], Any]:
        def send() -> Any:  # based on the current version, so a repeated relabel is no conflict
            graph.refresh_from_db()
            base = graph.current_version.number if graph.current_version else 1
            body = {"baseVersion": base, "ops": [op]}
            return client.post(path, json.dumps(body), content_type="application/json")

        path = f"{API}/graphs/{graph.pk}/edits"
        return send

    from geon.runs.tasks import import_model

    def convert(name: str, content: bytes) -> Callable[[], Any]:
        def send() -> Any:
            answer = client.post(f"{API}/imports", {"model": SimpleUploadedFile(name, content)})
            import_model.apply(args=(answer.json()["id"],))
            done = client.get(answer["Location"])
            outcomes[name] = f"{done.json()['status']}: {done.json()['error'][:100]}"
            return done

        return send

    from bench_check import generate
    from bench_plan_maxima import maxima_document, rows_plan

    def planned(document: dict[str, Any], meshes: list[dict[str, int]]) -> tuple[str, list[int]]:
        made = do_create_graph(owner=user, title="plans", document=document)
        api = f"{API}/graphs/{made.pk}/plans"
        ids = []
        for n, axes in enumerate(meshes):
            body = json.dumps(rows_plan(document, f"p{n}", axes))
            ids.append(client.post(api, body, content_type="application/json").json()["id"])
        return api, ids

    def afresh(url: str) -> Callable[[], Any]:
        """``GET url`` with the plan-cost cache emptied first: each try does the work (or queues
        it) again, not read the last try's answer."""
        from django.core.cache import caches

        from geon.graphs.services.plan_jobs import CACHE

        return lambda: (caches[CACHE].clear(), client.get(url))[1]

    normal_api, (normal,) = planned(generate(1000, 1), [{"d": 8}])
    huge_api, (wide, turned) = planned(
        maxima_document(), [{"d": 4096, "r": 16}, {"r": 16, "d": 4096}]
    )

    outcomes: dict[str, str] = {}
    models = ROOT / "tests" / "interop" / "models"
    bombs = import_bombs()
    mesh = {"name": "m", "axes": {"x": 10**12}}
    many = identical_applications(800)
    kinds: dict[str, list[tuple[str, Callable[[], Any]]]] = {
        "validate": [
            ("loom example (baseline)", post_json(f"{API}/validate", LOOM)),
            ("43 KB axis reference", post_json(f"{API}/validate", long_axis_reference())),
            ("range end 10**4000", post_json(f"{API}/validate", huge_range_end())),
            ("100,000 nested [", post_json(f"{API}/validate", "[" * 100_000)),
        ],
        "validate, 800 applications": [
            ("100 ops x 8 shards (baseline)", post_json(f"{API}/validate", generate(100, 8))),
            ("800 identical applications", post_json(f"{API}/validate", many)),
        ],
        "run inputs": [
            ("loom inputs .npz (baseline)", upload(npz(**inputs))),
            (f"{len(bomb) >> 10} KiB .npz of 1 GiB zeros", upload(bomb)),
        ],
        "edits and plans": [
            ("relabel (baseline)", edit({"op": "update_node", "id": operation, "label": "add"})),
            (
                "shard into 10**12 parts",
                edit({"op": "shard", "operation": operation, "dim": 0, "parts": 10**12}),
            ),
            (
                "plan over 10**12 devices",
                post_json(
                    f"{API}/graphs/{graph.pk}/plans", {"name": "huge", "mesh": mesh, "spec": {}}
                ),
            ),
        ],
        "plan cost and diff": [
            ("cost, 1,000 ops x 8 (baseline)", afresh(f"{normal_api}/{normal}/cost")),
            ("cost on 65,536 devices", afresh(f"{huge_api}/{wide}/cost")),
            ("diff on 65,536 devices", afresh(f"{huge_api}/{wide}/diff/{turned}")),
        ],
        "model imports": [
            ("mlp.onnx (baseline)", convert("mlp.onnx", (models / "mlp.onnx").read_bytes())),
            ("encoder.onnx", convert("encoder.onnx", (models / "encoder.onnx").read_bytes())),
            (f"Loop of 2**62 ({len(bombs['loop'])} B)", convert("loop.onnx", bombs["loop"])),
            (f"Pad to 20,002^2 ({len(bombs['pad'])} B)", convert("pad.onnx", bombs["pad"])),
            (
                f"150,000 Relu ({len(bombs['chain']) >> 20} MiB)",
                convert("chain.onnx", bombs["chain"]),
            ),
        ],
    }
    for _kind, cases in kinds.items():  # warm up: imports, compiled schemas, first queries
        cases[0][1]()
    print(f"hostile inputs through the request path; best of {args.repeat}, peak traced memory")
    heads = ("status", "ms", "peak MiB", "answer", "time", "memory")
    print(
        f"{'':34} {heads[0]:>6} {heads[1]:>9} {heads[2]:>9} {heads[3]:>10} {heads[4]:>8} "
        f"{heads[5]:>8}"
    )
    try:
        for kind, cases in kinds.items():
            print(kind)
            base: dict[str, Any] | None = None
            for label, send in cases:
                row = measure(send, args.repeat)
                base = base or row
                print(
                    f"  {label:32} {row['status']:>6} {row['s'] * 1e3:9.1f} "
                    f"{row['peak'] / 2**20:9.2f} {row['bytes']:>10,} "
                    f"{row['s'] / base['s']:7.1f}x {row['peak'] / max(base['peak'], 1):7.1f}x"
                )
        for name, outcome in outcomes.items():
            print(f"  {name}: {outcome}")
    finally:
        drop_database(SERVER)
    return 0


if __name__ == "__main__":
    sys.exit(main())
