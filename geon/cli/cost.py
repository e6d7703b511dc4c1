"""``geon cost FILE [--plan PLAN.json] [--profile NAME_OR_FILE]``: what a placed plan costs
(DESIGN.md §9).

Prints ONE JSON object on stdout (:func:`geon.core.plans.cost.cost_report`): ``{"profile": {...},
"collectives": [{"kind", "tensor", "producer", "consumer", "meshAxes", "devices", "groups",
"bytes", "bytesPerDevice", "seconds"}], "devices": [{"mesh", "coords", "flops", "computeSeconds",
"commSeconds", "peakBytes", ...}], "time": {"lower", "upper"}, "memory": {...}}``; node ids name
tensors and operations; ``bytesPerDevice`` is one device's buffer of a collective (XLA's
convention) and ``groups`` how many groups run it. ``--plan`` first writes a plan (the REST
``ShardPlan`` shape, as ``geon plan`` does: :func:`geon.core.plans.apply_plan`) into the document;
without it the document's own placements are costed. ``--profile`` is a shipped profile's name
(``h100-sxm-8``, the default, ``tpu-v5e-16``, ``cpu-host``) or the path of a profile JSON file.
Malformed nodes are left out of the cost (``geon check`` reports them). Exit status 0 on success; 1
when the plan does not fit the document; 2 when a file cannot be read or is not JSON, or the
document, the plan or the profile is refused (one line on stderr says why).
"""

from __future__ import annotations

import argparse
import json
import sys

from geon.cli.fail import fail
from geon.cli.files import read_json
from geon.core.errors import GeonError
from geon.core.graph import Graph
from geon.core.plans import PlanError, apply_plan, read_plan
from geon.core.plans.cost import cost_report, load_profile, shipped_profiles

HELP = "print what a placed plan costs: collectives, time and memory per device (JSON)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", metavar="FILE", help="the placed document (JSON)")
    parser.add_argument("--plan", metavar="PLAN.json", help="write this shard plan in first")
    parser.add_argument(
        "--profile",
        metavar="NAME_OR_FILE",
        help=f"hardware profile: one of ({', '.join(shipped_profiles())}) or a JSON file",
    )


def main(args: argparse.Namespace) -> int:
    try:
        data = read_json(args.file)
        plan_data = read_json(args.plan) if args.plan is not None else None
    except (OSError, ValueError) as exc:
        return fail("cost", str(exc))
    try:
        profile = load_profile(args.profile)
        graph = Graph.from_json(data)
    except GeonError as exc:
        return fail("cost", str(exc))
    plan = None
    if plan_data is not None:
        try:
            plan = read_plan(plan_data)
        except PlanError as exc:
            return fail("cost", f'"{args.plan}" is not a plan: {exc}')
        try:
            graph = apply_plan(graph, plan)
        except GeonError as exc:
            print(
                f'geon cost: plan "{plan.name}" does not fit "{args.file}": {exc}', file=sys.stderr
            )
            return 1
    try:
        report = cost_report(graph, profile, plan=plan)
    except GeonError as exc:
        return fail("cost", str(exc))
    sys.stdout.write(json.dumps(report) + "\n")
    return 0
