"""``geon export FILE.json --to onnx|numpy|einsum|python|jax -o OUT [--weights W.npz]``.

Exports a document (:mod:`geon.interop.export`): ``onnx`` writes an ONNX model that
onnxruntime runs with the same results (``--weights`` puts those values in as initializers;
without it, every leaf is a graph input named by its label); ``numpy`` a standalone script
(``python OUT --inputs in.npz --out out.npz``); ``einsum`` one line per contraction; ``python``
geon builder code that rebuilds the graph; ``jax`` a standalone JAX program of the document under
its placed plan (mesh, shardings, ``python OUT --inputs in.npz --out out.npz [--hlo H.txt]``,
:mod:`geon.interop.jax_export`; jax is not needed to write it). The other formats hold no
placement: a placed document exports its logical model (the plan's partial products put back
whole, its Applications left out) and one line on stderr says so. Exit status 0 on success, 2
when the document or the
request is refused (one line on stderr says why).
"""

from __future__ import annotations

import argparse
import json
import zipfile
from typing import Any

import numpy as np

from geon.cli.fail import fail
from geon.core.errors import GeonError
from geon.core.graph import Graph

HELP = "export a geon document as ONNX, NumPy, einsum, Python or a JAX program of its plan"
FORMATS = ("onnx", "numpy", "einsum", "python", "jax")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", metavar="FILE.json", help="the document")
    parser.add_argument(
        "--to", required=True, metavar="FORMAT", help="onnx, numpy, einsum, python or jax"
    )
    parser.add_argument("-o", "--out", metavar="OUT", required=True, help="the file to write")
    parser.add_argument("--weights", metavar="W.npz", help="values of leaves, by label (onnx)")


def main(args: argparse.Namespace) -> int:
    """Read the document, export it, write the result."""
    from geon.interop.export import export_logical

    if args.to not in FORMATS:
        return fail("export", f'--to "{args.to}" is unknown; expected one of {", ".join(FORMATS)}')
    try:
        with open(args.file, "rb") as f:
            data: Any = json.loads(f.read())
    except OSError as exc:
        return fail("export", f'cannot read "{args.file}": {exc.strerror or exc}')
    except (ValueError, RecursionError) as exc:
        return fail("export", f'"{args.file}" is not valid JSON: {exc}')
    weights: dict[str, Any] | None = None
    try:
        if args.weights is not None:
            try:
                with np.load(args.weights, allow_pickle=False) as npz:
                    weights = {k: npz[k] for k in npz.files}
            except (OSError, ValueError, zipfile.BadZipFile, EOFError, AttributeError) as exc:
                return fail("export", f'cannot read "{args.weights}" as an .npz file: {exc}')
        graph = Graph.from_json(data)
        result: Any
        notice: str | None = None
        if args.to == "jax":
            from geon.interop.jax_export import to_jax

            result = to_jax(graph)
        else:
            result, notice = export_logical(graph, args.to, weights)
    except GeonError as exc:
        return fail("export", str(exc))
    except Exception as exc:  # a bug must still reach the user as one line, not a traceback
        return fail("export", f"the export failed unexpectedly ({type(exc).__name__}: {exc})")
    try:
        if args.to == "onnx":
            with open(args.out, "wb") as f:
                f.write(result.SerializeToString())
        else:
            with open(args.out, "w") as f:
                f.write(result if result.endswith("\n") else result + "\n")
    except OSError as exc:
        return fail("export", f'cannot write "{args.out}": {exc.strerror or exc}')
    if notice is not None:
        fail("export", notice)
    return 0
