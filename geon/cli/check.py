"""``geon check FILE``: check a document and print one JSON issue per line.

Exit status: 0 when there is no issue of severity ``error`` (warnings are printed too), 1 when
there is at least one, 2 when the file cannot be read. ``--strict-broadcasting`` reports
``AccidentalBroadcast`` (an elementwise operation that broadcasts axes that likely mean the same
thing) as an error instead of a warning. A file that is not JSON, or not a valid
document, is reported as issues like any other problem.
"""

from __future__ import annotations

import argparse
import json
import sys

from geon.cli.fail import fail
from geon.core.checks import check_document

HELP = "check a LoomGraph / geon document and print its issues as JSON lines"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", metavar="FILE", help="the document (JSON); - reads stdin")
    parser.add_argument(
        "--strict-broadcasting",
        action="store_true",
        help="report AccidentalBroadcast as an error (exit 1) instead of a warning",
    )


def main(args: argparse.Namespace) -> int:
    try:
        if args.file == "-":
            data: bytes = sys.stdin.buffer.read()
        else:
            with open(args.file, "rb") as f:
                data = f.read()
    except OSError as exc:
        reason = exc.strerror or str(exc)
        return fail("check", f'cannot read "{args.file}": {reason}')
    issues = check_document(data, strict_broadcasting=args.strict_broadcasting)
    for issue in issues:
        print(json.dumps(issue.to_json(), ensure_ascii=False))
    return 1 if any(i.severity == "error" for i in issues) else 0
