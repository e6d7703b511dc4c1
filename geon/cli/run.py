"""``geon run FILE [--inputs in.npz] [--weights W.npz] [--sharded] [--engine numpy|jax]
[--out out.npz] [--backend B] [--seed N]``.

Runs a document on the executor (:func:`geon.execute.run`). Inputs come from ``--inputs`` (an
``.npz`` whose keys are tensor labels, or ids where a label is missing or not unique; loaded
without pickles) and from the weights: ``--weights``, or else the ``.npz`` beside ``FILE`` with
its name (``model.json`` -> ``model.npz``, where ``geon import`` writes a model's initializers)
when it exists. A weight of ``--weights`` also given in ``--inputs`` is refused with its name;
the sibling file only fills the input tensors of the document that ``--inputs`` leaves out.
Inputs that neither holds are generated from ``--seed`` (default 0 when there is no
``--inputs``; with ``--inputs`` every input must be there unless ``--seed`` is given).
``--out`` writes every tensor that no operation reads, keyed the same way. With ``--sharded`` the
document runs logically and Application by Application, and ONE JSON object is printed on stdout:
``{"outputs": [...], "max_abs_diff": {label: float}}`` (each output: id, label, shape, dtype and
sum/min/max). Without it, the outputs are summarised as JSON on stdout too (no ``max_abs_diff``).
With ``--engine jax`` (issue 31; jax must be installed: ``pip install 'jax[cpu]'``) the document
runs logically on NumPy and under its placed plan on JAX (:mod:`geon.interop.jax_engine`, one
jitted program over the plan's mesh, CPU host devices forced as the mesh needs), and the JSON is
``{"engine": "jax", "outputs", "max_abs_diff", "devices", "compileSeconds", "runSeconds"}``;
``--out`` writes JAX's outputs. ``--engine numpy`` (the default) is the executor.
Graphs with error issues are refused (run ``geon check`` to see them). Exit status 0 on success,
2 when the request, the document or the run is refused (one line on stderr says why).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import zipfile
from typing import Any

import numpy as np

from geon.cli.fail import fail
from geon.core.errors import GeonError
from geon.core.graph import Graph
from geon.core.plans import graph_inputs
from geon.engines import run_on_jax

HELP = "run a document logically, or sharded and checked against the logical run"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", metavar="FILE", help="the document (JSON)")
    parser.add_argument("--inputs", metavar="IN.npz", help="input arrays keyed by tensor label")
    parser.add_argument(
        "--weights", metavar="W.npz", help="more input arrays (default: FILE's .npz, if any)"
    )
    parser.add_argument(
        "--sharded", action="store_true", help="run Application by Application and diff"
    )
    parser.add_argument(
        "--engine", metavar="E", default="numpy", help="numpy (default) or jax (the placed plan)"
    )
    parser.add_argument("--out", metavar="OUT.npz", help="write the outputs to this .npz file")
    parser.add_argument("--backend", metavar="B", help="numpy (default, or GEON_BACKEND) or cupy")
    parser.add_argument("--seed", metavar="N", help="seed for inputs not in --inputs")


def _load_npz(path: str) -> dict[str, np.ndarray[Any, Any]]:
    try:
        with np.load(path, allow_pickle=False) as data:
            if not isinstance(data, np.lib.npyio.NpzFile):
                raise GeonError(
                    f'"{path}" is not an .npz file; expected one written by numpy.savez'
                )
            return {k: data[k] for k in data.files}
    except OSError as exc:
        raise GeonError(f'cannot read "{path}": {exc.strerror or exc}') from None
    except (ValueError, zipfile.BadZipFile, EOFError) as exc:
        raise GeonError(f'"{path}" is not a readable .npz file: {exc}') from None


def _weights(args: argparse.Namespace, graph: Graph) -> dict[str, np.ndarray[Any, Any]]:
    """The arrays of ``--weights``, or of the ``.npz`` beside the document (those that name an
    input tensor of it that ``--inputs`` does not hold), or none."""
    if args.weights is not None:
        return _load_npz(args.weights)
    beside = os.path.splitext(args.file)[0] + ".npz"
    if not os.path.isfile(beside) or beside in (args.inputs, args.out):
        return {}
    given = set(_load_npz(args.inputs)) if args.inputs is not None else set()
    names = {t.label for t in graph_inputs(graph)} | {t.id for t in graph_inputs(graph)}
    return {k: v for k, v in _load_npz(beside).items() if k in names and k not in given}


def main(args: argparse.Namespace) -> int:
    from geon.execute import run

    try:
        with open(args.file, "rb") as f:
            data: Any = json.loads(f.read())
    except OSError as exc:
        return fail("run", f'cannot read "{args.file}": {exc.strerror or exc}')
    except (ValueError, RecursionError) as exc:
        return fail("run", f'"{args.file}" is not valid JSON: {exc}; run geon check to see why')
    seed: int | None = None
    if args.seed is not None:
        try:
            seed = int(args.seed)
        except ValueError:
            return fail("run", f'--seed "{args.seed}" is invalid; expected an integer such as 0')
    if args.engine not in ("numpy", "jax"):
        return fail("run", f'--engine "{args.engine}" is not known; expected "numpy" or "jax"')
    if args.engine == "jax" and (args.sharded or args.backend is not None):
        return fail("run", "--engine jax runs the plan on JAX; leave out --sharded and --backend")
    if args.engine == "jax":
        from geon.interop.jax_engine import INSTALL, jax_available

        if not jax_available():
            return fail("run", f"--engine jax needs jax, which is not installed: {INSTALL}")
    if args.backend is not None and args.backend not in ("numpy", "cupy"):
        return fail("run", f'--backend "{args.backend}" is not known; expected "numpy" or "cupy"')
    try:
        graph = Graph.from_json(data)
        errors = [i for i in graph.check() if i.severity == "error"]
        if errors:
            return fail(
                "run",
                f'"{args.file}" has {len(errors)} error issue(s), first {errors[0].constraint}: '
                f"{errors[0].message}; run geon check {args.file} to see them all",
            )
        inputs = _load_npz(args.inputs) if args.inputs is not None else None
        weights = _weights(args, graph)
        if weights:
            both = sorted(set(weights) & set(inputs or {}))
            if both:
                raise GeonError(
                    f'"{both[0]}" is in both --inputs and the weights; give each array once'
                )
            inputs = {**(inputs or {}), **weights}
        if inputs is None and seed is None:
            seed = 0
        if args.engine == "jax":
            summary, done = run_on_jax(graph, inputs, seed)
            if args.out is not None:
                try:
                    np.savez(args.out, **done.outputs)  # type: ignore[arg-type]
                except OSError as exc:
                    return fail("run", f'cannot write "{args.out}": {exc.strerror or exc}')
            sys.stdout.write(json.dumps(summary) + "\n")
            return 0
        result = run(graph, inputs, seed=seed, sharded=args.sharded, backend=args.backend)
        if args.out is not None:
            try:
                np.savez(args.out, **result.by_key())  # type: ignore[arg-type]
            except OSError as exc:
                return fail("run", f'cannot write "{args.out}": {exc.strerror or exc}')
    except GeonError as exc:
        return fail("run", str(exc))
    except Exception as exc:  # a bug must still reach the user as one line, not a traceback
        return fail("run", f"the executor failed unexpectedly ({type(exc).__name__}: {exc})")
    summary = result.summary()
    out: dict[str, Any] = {"outputs": summary["outputs"]}
    if result.max_abs_diff is not None:
        out["max_abs_diff"] = result.max_abs_diff
    sys.stdout.write(json.dumps(out) + "\n")
    return 0
