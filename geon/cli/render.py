"""``geon render FILE -o OUT``: draw a document as SVG, PNG or DOT (DESIGN.md §7).

The format comes from ``OUT``'s extension (``.svg``, ``.png``, ``.dot``) unless ``--format``
names it; ``-o -`` (the default) writes to stdout, as SVG unless ``--format`` says otherwise.
The document is checked first and the nodes its errors name are drawn in red (``--no-issues``
draws it plain). A document that cannot be read at all is refused. Exit status 0 when the diagram
was written (issues or not; one line on stderr counts them), 2 when the request or the file is
refused (one line on stderr says why).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import tempfile
from collections.abc import Iterator

from geon.cli.fail import fail
from geon.core.checks import check
from geon.core.documents import load_document
from geon.core.errors import GeonError
from geon.render import FORMATS, Format, check_format, render

HELP = "draw a document as an SVG, PNG or DOT diagram"

_EXTENSIONS = tuple(f".{f}" for f in FORMATS)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", metavar="FILE", help="the document (JSON); - reads stdin")
    parser.add_argument(
        "-o",
        "--out",
        metavar="OUT",
        default="-",
        help="output file: .svg, .png or .dot (- = stdout)",
    )
    parser.add_argument(
        "--format", metavar="FORMAT", help="svg, png or dot (default: from OUT's extension)"
    )
    parser.add_argument(
        "--no-issues", action="store_true", help="do not check the document or highlight issues"
    )


@contextlib.contextmanager
def _graphviz_messages(found: list[str]) -> Iterator[None]:
    """Collect what Graphviz and its libraries write to the process's stderr (file descriptor
    2, which Python's ``sys.stderr`` does not see) into ``found``.

    The bundled fontconfig warns about configuration files newer than itself on some systems;
    that says nothing about the user's document, so it is dropped and the rest is kept.
    """
    sys.stderr.flush()
    with tempfile.TemporaryFile() as sink:
        saved = os.dup(2)
        os.dup2(sink.fileno(), 2)
        try:
            yield
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            sink.seek(0)
            text = sink.read().decode("utf-8", "replace")
        found.extend(
            line
            for line in text.splitlines()
            if line.strip() and not line.startswith("Fontconfig warning")
        )


def _format_of(out: str, given: str | None) -> Format:
    if given is not None:
        # "SVG" is accepted; a refusal names the value as it was given.
        return check_format(given.lower()) if given.lower() in FORMATS else check_format(given)
    if out == "-":
        return "svg"
    ext = os.path.splitext(out)[1].lower()
    if ext in _EXTENSIONS:
        return check_format(ext[1:])
    valid = ", ".join(f'"{e}"' for e in _EXTENSIONS)
    raise GeonError(
        f'cannot tell the format of "{out}" from its extension "{ext}"; expected one of ({valid}),'
        " or name it with --format"
    )


def main(args: argparse.Namespace) -> int:
    try:
        fmt = _format_of(args.out, args.format)
    except GeonError as exc:
        return fail("render", str(exc))
    try:
        if args.file == "-":
            data: bytes = sys.stdin.buffer.read()
        else:
            with open(args.file, "rb") as f:
                data = f.read()
    except OSError as exc:
        return fail("render", f'cannot read "{args.file}": {exc.strerror or exc}')
    graph, load_issues = load_document(data)
    if graph is None:
        reason = load_issues[0].message if load_issues else "it is not a document"
        return fail("render", f'cannot render "{args.file}": {reason}')
    issues = [] if args.no_issues else load_issues + check(graph)
    said: list[str] = []
    try:
        with _graphviz_messages(said):
            output = render(graph, fmt, issues)
    except GeonError as exc:
        return fail("render", f'cannot render "{args.file}": {exc}')
    for line in said:
        print(f"geon render: graphviz: {line}", file=sys.stderr)
    try:
        if args.out == "-":
            sys.stdout.buffer.write(output)
            sys.stdout.buffer.flush()
        else:
            with open(args.out, "wb") as f:
                f.write(output)
    except OSError as exc:
        return fail("render", f'cannot write "{args.out}": {exc.strerror or exc}')
    errors = sum(1 for i in issues if i.severity == "error")
    where = "stdout" if args.out == "-" else f'"{args.out}"'
    note = f" with {errors} error{'s' if errors != 1 else ''} highlighted" if errors else ""
    print(f"geon render: wrote {fmt} to {where}{note}", file=sys.stderr)
    return 0
