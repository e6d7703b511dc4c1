"""``geon cost FILE [--profile NAME_OR_FILE]``: what a placed plan costs (DESIGN.md §9).

Prints ONE JSON object on stdout (:func:`geon.core.costmodel.cost_report`):
``{"profile": {...}, "collectives": [{"kind", "tensor", "producer", "consumer", "meshAxes",
"devices", "bytes", "seconds"}], "devices": [{"mesh", "coords", "flops", "computeSeconds",
"commSeconds", "peakBytes", ...}], "time": {"lower", "upper"}, "memory": {...}}``; node ids
name tensors and operations. ``--profile`` is a shipped profile's name (``h100-sxm-8``, the
default, ``tpu-v5e-16``, ``cpu-host``) or the path of a profile JSON file. Malformed nodes are
left out of the cost (``geon check`` reports them). Exit status 0 on success, 2 when the file,
the document or the profile is refused (one line on stderr says why).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from geon.core.costmodel import cost_report, load_profile, shipped_profiles
from geon.core.errors import GeonError
from geon.core.graph import Graph

HELP = "print what a placed plan costs: collectives, time and memory per device (JSON)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", metavar="FILE", help="the placed document (JSON)")
    parser.add_argument(
        "--profile",
        metavar="NAME_OR_FILE",
        help=f"hardware profile: one of ({', '.join(shipped_profiles())}) or a JSON file",
    )


def _fail(message: str) -> int:
    print(f"geon cost: {message}", file=sys.stderr)
    return 2


def main(args: argparse.Namespace) -> int:
    try:
        with open(args.file, "rb") as f:
            data: Any = json.loads(f.read())
    except OSError as exc:
        return _fail(f'cannot read "{args.file}": {exc.strerror or exc}')
    except (ValueError, RecursionError) as exc:
        return _fail(f'"{args.file}" is not valid JSON: {exc}; run geon check to see why')
    try:
        profile = load_profile(args.profile)
        graph = Graph.from_json(data)
        report = cost_report(graph, profile)
    except GeonError as exc:
        return _fail(str(exc))
    sys.stdout.write(json.dumps(report) + "\n")
    return 0
