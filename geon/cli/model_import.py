"""``geon import MODEL.onnx -o OUT.json [--weights W.npz] [--dim NAME=N ...]``.

Imports an ONNX model as a geon document (:func:`geon.interop.onnx_import.import_onnx`): every
dim gets a named axis by unification, tensors are labelled with the ONNX value names, and the
initializers' values are written to ``--weights`` (default: ``OUT.npz`` beside the document;
keys = tensor labels = ONNX initializer names). ``--dim batch=8`` binds a ``dim_param``.
Prints one JSON line: the counts of axes, tensors and operations, the inputs, the weights and
the outputs. Exit status 0 on success, 2 when the model is refused (one line on stderr says why,
for unsupported operators the list of them with their node names). Nothing the model names is
opened (external data is refused), control flow is refused, constants are computed only within
a bound, and a model whose document would surely be over ``GEON_MAX_REQUEST_BYTES`` (16 MiB
unless the environment says otherwise) is refused before it is converted.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

import numpy as np

from geon.cli.fail import fail
from geon.core.errors import GeonError

HELP = "import an ONNX model as a geon document"
#: The document's bound: what the server accepts for one (``GEON_MAX_REQUEST_BYTES``, read from
#: the environment as the server reads it), so a model whose document could never be uploaded
#: is refused before it is converted.
MAX_BYTES_NAME, DEFAULT_MAX_BYTES = "GEON_MAX_REQUEST_BYTES", 16 * 1024 * 1024


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("model", metavar="MODEL.onnx", help="the ONNX model")
    parser.add_argument("-o", "--out", metavar="OUT.json", required=True, help="the document")
    parser.add_argument("--weights", metavar="W.npz", help="initializer values (OUT.npz)")
    parser.add_argument(
        "--dim", metavar="NAME=N", action="append", default=[], help="bind a dim_param"
    )


def main(args: argparse.Namespace) -> int:
    """Import, write the document and the weights, print the summary."""
    from geon.interop.dims import parse_dims
    from geon.interop.onnx_import import import_onnx

    if not os.path.isfile(args.model):
        return fail("import", f'cannot read "{args.model}": no such file')
    weights_path = args.weights or os.path.splitext(args.out)[0] + ".npz"
    try:
        max_bytes = int(os.environ.get(MAX_BYTES_NAME) or DEFAULT_MAX_BYTES)
    except ValueError:
        return fail("import", f'{MAX_BYTES_NAME} is "{os.environ[MAX_BYTES_NAME]}"; expected bytes')
    try:
        imported = import_onnx(
            args.model, dims=parse_dims(args.dim), max_bytes=max_bytes, bound=MAX_BYTES_NAME
        )
    except GeonError as exc:
        return fail("import", str(exc))
    except Exception as exc:  # a bug must still reach the user as one line, not a traceback
        return fail("import", f"the import failed unexpectedly ({type(exc).__name__}: {exc})")
    doc = imported.graph
    try:
        with open(args.out, "w") as f:
            json.dump(doc.to_json(), f, indent=1)
        np.savez(weights_path, **imported.weights)  # type: ignore[arg-type]
    except OSError as exc:
        return fail("import", f"cannot write the output: {exc.strerror or exc}")
    kinds: dict[str, int] = {}
    for node in doc.nodes:
        kind = node.type.rsplit("/", 1)[-1]
        kinds[kind] = kinds.get(kind, 0) + 1
    summary = {
        "document": args.out,
        "weights": weights_path,
        "axes": kinds.get("Axis", 0),
        "tensors": kinds.get("Tensor", 0),
        "operations": kinds.get("Operation", 0),
        "inputs": imported.inputs,
        "initializers": sorted(imported.weights),
        "outputs": imported.outputs,
    }
    sys.stdout.write(json.dumps(summary) + "\n")
    return 0
