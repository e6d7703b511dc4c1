"""How much does sharding cost? (issue 5: the MLP sharded 8 ways along the batch <= 1.3x logical)

Run: ``.venv/bin/python benchmarks/bench_sharded.py [--batch 512] [--parts 8] [--repeat 7]``

Every operation of the named-axes MLP of ``bench_mlp.py`` (batch 512, widths
1024-4096-4096-1024, float32) is sharded into ``--parts`` Applications along the batch axis
``B`` (:func:`geon.core.plans.shards.shard`), so a sharded run executes 8 x 8 = 64 Applications,
each on its selections, and assembles the outputs. It prints, next to the logical run of the same
compiled graph measured in the same process, the best of ``--repeat`` interleaved runs of each
plan (outputs copied to the host), their ratio, and the max abs difference between them.

A second baseline separates the executor's cost from the arithmetic's: the same MLP hand-written
in NumPy, once whole and once block by block (each layer's matmul, bias and relu on 64-row
blocks written into preallocated outputs). On OpenBLAS a GEMM with 64 rows is markedly less
efficient per flop than one with 512 (the 4096x4096 weight is packed again for every block), so
"sharded / logical" includes that cost; "geon sharded / numpy blocks" is what the executor adds.

By default each operation's Applications get the threads their work pays for
(:meth:`geon.execute.Plan.group_workers`): large matmuls run on every core, BLAS limited to one
thread each, where BLAS is single-threaded; with a BLAS already on every core (OpenBLAS's
default), and for elementwise operations, they run one after another on the calling thread.
``GEON_SHARD_WORKERS`` forces a count.
The rows "sharded, 1 worker" (everything one after another) and "sharded, N workers" (every
group on the CPU count's threads) force the two alternatives, measured in the same rounds.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_mlp import best_of, build_mlp, mlp_inputs, numpy_mlp

from geon.core.graph import INDEX_AXES, OPERATION
from geon.core.plans.shards import shard
from geon.execute import Plan, compile_graph, select_backend


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--batch", type=int, default=512)
    parser.add_argument("--parts", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--backend", default="numpy")
    args = parser.parse_args(argv)
    g, _ = build_mlp(args.batch)
    for op in g.of_type(OPERATION):
        assert "B" in op.tags[INDEX_AXES]["axes"]
        shard(g, op.id, dim="B", parts=args.parts)
    issues = g.check()
    if issues:
        print(f"the sharded graph has {len(issues)} issues, first: {issues[0].message}")
        return 1
    be = select_backend(args.backend)
    logical = compile_graph(g, backend=be)
    sharded = compile_graph(g, sharded=True, backend=be)
    inp = mlp_inputs(args.batch)
    ids = {logical.tensors[t].label: t for t in logical.inputs}
    device = {ids[k]: be.asarray(v) for k, v in inp.items()}

    def runner(plan: Plan) -> Any:
        def go() -> Any:
            return {t: be.to_host(v) for t, v in plan.execute(device).items()}

        return go

    a = next(iter(runner(logical)().values()))
    b = next(iter(runner(sharded)().values()))

    def numpy_blocks() -> Any:
        layers = sum(1 for k in inp if k.startswith("w"))
        h = inp["x"]
        rows = np.array_split(np.arange(args.batch), args.parts)
        for i in range(1, layers + 1):
            w, bias = inp[f"w{i}"], inp[f"b{i}"]
            out = np.empty((args.batch, w.shape[1]), np.float32)
            for r in rows:
                block = out[r[0] : r[-1] + 1]
                np.matmul(h[r[0] : r[-1] + 1], w, out=block)
                np.add(block, bias, out=block)
                if i < layers:
                    np.maximum(block, 0, out=block)
            h = out
        return h

    def forced(workers: int) -> Any:
        def go() -> Any:
            saved = os.environ.get("GEON_SHARD_WORKERS")
            os.environ["GEON_SHARD_WORKERS"] = str(workers)
            try:
                return runner(sharded)()
            finally:
                if saved is None:
                    del os.environ["GEON_SHARD_WORKERS"]
                else:
                    os.environ["GEON_SHARD_WORKERS"] = saved

        return go

    cores = max(1, os.cpu_count() or 1)
    fns = {
        "logical": runner(logical),
        f"sharded x{args.parts} (batch)": runner(sharded),
        "sharded, 1 worker": forced(1),
        f"sharded, {cores} workers": forced(cores),
        "numpy whole": lambda: numpy_mlp(inp),
        f"numpy {args.parts} row blocks": numpy_blocks,
    }
    best_of(fns, 1)
    best = best_of(fns, args.repeat)
    threads = ", ".join(
        f"{sharded.steps[a].kernel} {sharded.group_workers(a, b)}" for a, b in sharded.groups
    )
    print(
        f"named-axes MLP batch {args.batch}, {len(logical.steps)} operations -> "
        f"{len(sharded.steps)} applications, backend {be.name}; best of {args.repeat}"
    )
    print(f"threads per operation: {threads}")
    print(f"max |sharded - logical| = {float(np.max(np.abs(a - b))):.3g}")
    blocks = best[f"numpy {args.parts} row blocks"]
    print(f"{'':22} {'ms':>9} {'vs logical':>11} {'vs numpy blocks':>16}")
    for name, t in best.items():
        print(f"{name:22} {t * 1e3:9.2f} {t / best['logical']:10.3f}x {t / blocks:15.3f}x")
    print("target: sharded <= 1.3x logical")
    return 0


if __name__ == "__main__":
    sys.exit(main())
