"""``geon plan FILE --search MESH [--profile P] [--step forward|train] [--budget S] [-o OUT]``
(issue 33): prints ``{"best", "candidates", "searched", "complete"}``
(:func:`geon.core.plans.cost.search.search_plans`) on stdout, progress on stderr; with ``-o``
writes the best plan into the document at ``OUT``.

``MESH`` is ``axis=size`` pairs separated by commas (``dp=2,tp=4``; ``pp=2,dp=2`` adds pipeline
stages). ``--step train`` first writes the training step (SGD, :func:`geon.core.training_step`)
and searches that. Checked before any work: the mesh (at most 4 axes, 4096 devices), the
budget (more than 0, at most 600 s). Exit 0; 1 when no candidate fits the profile's memory
(the candidates are still printed); 2 when an argument or file is refused.
"""

from __future__ import annotations

import argparse
import json
import sys

from geon.cli.fail import fail
from geon.cli.files import read_json
from geon.core.autodiff import training_step
from geon.core.errors import GeonError
from geon.core.graph import Graph
from geon.core.plans import apply_plan, parse_mesh, read_plan
from geon.core.plans.cost import load_profile
from geon.core.plans.cost.search import search_plans

MAX_BUDGET = 600.0


def run_search(args: argparse.Namespace) -> int:
    try:
        mesh = parse_mesh(args.search)
    except ValueError as exc:
        return fail("plan", str(exc), 2)
    if not 0 < args.budget <= MAX_BUDGET:
        return fail(
            "plan", f'budget "{args.budget}" is not valid; expected seconds > 0 and <= 600', 2
        )
    try:
        profile = load_profile(args.profile)
        graph = Graph.from_json(read_json(args.file))
    except (OSError, ValueError, GeonError) as exc:
        return fail("plan", str(exc), 2)
    if args.step == "train":
        try:
            graph = training_step(graph, optimizer="sgd", lr=0.01)
        except GeonError as exc:
            return fail("plan", f'"{args.file}" has no training step: {exc}', 2)

    def progress(done: int, seconds: float) -> None:
        print(f"geon plan: searched {done} plans in {seconds:.2f} s", file=sys.stderr)

    found = search_plans(graph, mesh, profile, budget=args.budget, progress=progress)
    sys.stdout.write(json.dumps(found) + "\n")
    if found["best"] is None:
        print("geon plan: no candidate fits the profile's memory", file=sys.stderr)
        return 1
    if args.out != "-":
        placed = apply_plan(graph, read_plan(found["best"]["plan"]))
        try:
            with open(args.out, "w", encoding="utf-8") as f:
                f.write(json.dumps(placed.to_json(), indent=2))
        except OSError as exc:
            return fail("plan", f'cannot write "{args.out}": {exc.strerror or exc}', 2)
    return 0
