"""``geon import MODEL.onnx -o OUT.json [--weights W.npz] [--dim NAME=N ...] [--names NAMES]``
and ``geon import MODEL.onnx --show-names [--dim NAME=N ...] [--names NAMES]``.

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

The axes' names (issue 35, :mod:`geon.interop.onnx_roles`): by default an axis keeps the name it
is imported with (a ``dim_param``'s, else ``d<length>``: ``d4``, ``d64``), so scripts and plans
written against them do not change. ``--names inferred`` gives every axis its proposed name
(``heads``, ``head_size``, ``hidden``, ``ffn``...); ``--names d4=heads,d64=mlp`` or ``--names
names.json`` (an object ``{"d4": "heads"}``) names some axes over the proposals; ``--names
imported`` is the default said out loud. ``--show-names`` imports without writing anything and
prints the table to choose from: each axis as imported, its length, role, the name it would get
under ``--names`` (as imported by default), the name proposed for its role and where the model
shows its role (length-1 axes are counted, not listed). A name that breaks
the axis-name rule, an axis the model does not have or a name given twice is refused naming it.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from typing import Any

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
    parser.add_argument("-o", "--out", metavar="OUT.json", help="the document")
    parser.add_argument("--weights", metavar="W.npz", help="initializer values (OUT.npz)")
    parser.add_argument(
        "--dim", metavar="NAME=N", action="append", default=[], help="bind a dim_param"
    )
    parser.add_argument(
        "--names",
        metavar="NAMES",
        default=IMPORTED,
        help=f"the axes' names: {IMPORTED} (default: d<length>, dim_params kept), {INFERRED} "
        "(the roles read off the model: heads, ffn...), or over those AXIS=NAME[,AXIS=NAME...] "
        "or a JSON file {AXIS: NAME}",
    )
    parser.add_argument(
        "--show-names",
        action="store_true",
        help="print each axis's length, role, name and where the model shows it; write nothing",
    )


#: ``--names``' two words: the names as imported (the default) and the proposed ones.
IMPORTED, INFERRED = "imported", "inferred"
_JSON_KIND = {list: "array", str: "string", int: "number", float: "number", bool: "boolean"}
_PAIR = re.compile(r"^\s*([^=\s]+)\s*=\s*([^=\s]+)\s*$")


class NamesOptionError(ValueError):
    """A ``--names`` value that is none of its forms; the message names it."""


def parse_names(text: str) -> dict[str, str] | None:
    """``--names``: ``None`` for :data:`IMPORTED`, ``{}`` for :data:`INFERRED`, the pairs of
    ``AXIS=NAME[,AXIS=NAME...]`` or the object of a JSON file (names over the proposals).

    >>> parse_names("inferred"), parse_names("d4=heads, d64=mlp")
    ({}, {'d4': 'heads', 'd64': 'mlp'})
    """
    if text == IMPORTED:
        return None
    if text == INFERRED:
        return {}
    forms = (
        f'expected "{IMPORTED}", "{INFERRED}", AXIS=NAME[,AXIS=NAME...] (e.g. "d4=heads") or a '
        'JSON file holding {"d4": "heads", ...}'
    )
    if "=" in text:
        pairs: dict[str, str] = {}
        for item in text.split(","):
            match = _PAIR.match(item)
            if match is None:
                raise NamesOptionError(f'names item "{item.strip()}" is invalid; {forms}')
            axis, name = match.groups()
            if axis in pairs:
                raise NamesOptionError(f'axis "{axis}" is named twice in --names; {forms}')
            pairs[axis] = name
        return pairs
    if not os.path.isfile(text):
        raise NamesOptionError(f'--names "{text}" is no such file, nor a word or pairs; {forms}')
    try:
        with open(text, encoding="utf-8") as f:
            found = json.load(f)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise NamesOptionError(
            f'cannot read names file "{text}" as JSON ({exc}); {forms}'
        ) from None
    if not isinstance(found, dict):
        raise NamesOptionError(
            f'names file "{text}" holds a JSON {_JSON_KIND.get(type(found), "value")}; {forms}'
        )
    return found


def main(args: argparse.Namespace) -> int:
    """Import, write the document and the weights, print the summary."""
    from geon.interop.dims import parse_dims
    from geon.interop.onnx_import import import_onnx

    if not os.path.isfile(args.model):
        return fail("import", f'cannot read "{args.model}": no such file')
    if not args.out and not args.show_names:
        return fail("import", "no -o OUT.json; expected the document's path, or --show-names")
    try:
        names = parse_names(args.names)
    except NamesOptionError as exc:
        return fail("import", str(exc))
    try:
        max_bytes = int(os.environ.get(MAX_BYTES_NAME) or DEFAULT_MAX_BYTES)
    except ValueError:
        return fail("import", f'{MAX_BYTES_NAME} is "{os.environ[MAX_BYTES_NAME]}"; expected bytes')
    try:
        imported = import_onnx(
            args.model,
            dims=parse_dims(args.dim),
            max_bytes=max_bytes,
            bound=MAX_BYTES_NAME,
            names=names,
        )
        if args.show_names:
            sys.stdout.write(names_table(imported.axes, names))
            return 0
    except GeonError as exc:
        return fail("import", str(exc))
    except Exception as exc:  # a bug must still reach the user as one line, not a traceback
        return fail("import", f"the import failed unexpectedly ({type(exc).__name__}: {exc})")
    weights_path = args.weights or os.path.splitext(args.out)[0] + ".npz"
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
        "names": {k: v for k, v in final_names(imported.axes, names).items() if k != v},
    }
    sys.stdout.write(json.dumps(summary) + "\n")
    return 0


def final_names(axes: list[Any], names: dict[str, str] | None) -> dict[str, str]:
    """``{name as imported: name in the document}`` of the document's ``axes``
    (``Imported.axes``) under ``--names`` (``None``: as imported)."""
    from geon.interop.onnx_roles import check_names

    if names is None:
        return {p.name: p.name for p in axes}
    given = {k: v for k, v in names.items() if k in {p.name for p in axes}}
    return check_names(axes, given)  # the check the import made, on the axes the document kept


def names_table(axes: list[Any], names: dict[str, str] | None) -> str:
    """``--show-names``: one row per axis longer than 1 (``axis``, ``length``, ``role``, the
    ``name`` it gets under ``--names``, as imported when none is given, the name ``proposed``
    for its role, which ``--names inferred`` gives, and where the model shows the role), then
    how many length-1 axes are not listed."""
    listed = [p for p in axes if p.length > 1]
    final = final_names(axes, names)
    rows = [("axis", "length", "role", "name", "proposed", "seen")]
    rows += [
        (p.name, str(p.length), p.role or "-", final[p.name], p.proposed, p.seen or "-")
        for p in listed
    ]
    widths = [max(len(r[i]) for r in rows) for i in range(5)]
    lines = []
    for r in rows:
        cells = [r[0].ljust(widths[0]), r[1].rjust(widths[1]), r[2].ljust(widths[2])]
        cells += [r[3].ljust(widths[3]), r[4].ljust(widths[4])]
        lines.append("  ".join([*cells, r[5]]).rstrip())
    hidden = len(axes) - len(listed)
    if hidden:
        lines.append(f"({hidden} axes of length 1 not listed)")
    return "\n".join(lines) + "\n"
