"""``geon plan FILE --plan PLAN.json -o OUT``: write a shard plan into a document.

``PLAN.json`` is the REST ``ShardPlan`` shape (:mod:`geon.core.plans.model`): ``{"name", "mesh":
{"name", "axes": {meshAxis: size}}, "axisMapping"?: {axisName: meshAxis}, "inputs"?:
{tensorLabelOrId: "replicated" | {"over": {...}} | {"device": [...]}}, "spec"?: {operationId:
{...}}}``. The plan is written as the server's generate writes it
(:func:`geon.core.plans.apply_plan`): its Mesh node, the Applications of every operation it
splits, none for the others, and where the graph inputs live. The result goes to ``OUT`` (``-``
or no ``-o``: stdout) as indented JSON.

``geon plan FILE --search MESH [--profile P] [--step forward|train] [--budget S] [-o OUT]``
searches plans instead (:mod:`geon.cli.plan_search`, issue 33).

Nothing is printed on success, except one line on stderr per operation the axis mapping leaves
whole (a contracted axis), saying why. Exit status 0 on success; 1 when the plan does not fit the
document (the message names the operation or input and why); 2 when a file cannot be read, is
not JSON, or is not a document or a plan.
"""

from __future__ import annotations

import argparse
import json
import sys

from geon.cli.fail import fail
from geon.cli.files import read_json
from geon.core.errors import GeonError
from geon.core.graph import Graph
from geon.core.nodes import GEON_TAG_PREFIX, selected_tensor_ids
from geon.core.plans import PlanError, apply_plan, plan_splits, read_plan
from geon.core.plans.cost import DEFAULT_PROFILE

HELP = "write a shard plan (mesh, axis mapping, inputs, spec) into a document"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", metavar="FILE", help="the document (JSON)")
    parser.add_argument("--plan", metavar="PLAN.json", help="the plan (JSON)")
    parser.add_argument("--search", metavar="MESH", help="search plans on a mesh like dp=2,tp=4")
    parser.add_argument("--profile", default=DEFAULT_PROFILE, help="hardware profile (--search)")
    parser.add_argument("--step", choices=("forward", "train"), default="forward")
    parser.add_argument("--budget", type=float, default=10.0, help="seconds (--search)")
    parser.add_argument("-o", "--out", metavar="OUT", default="-", help="output file (- = stdout)")


def main(args: argparse.Namespace) -> int:
    if args.search is not None:
        if args.plan is not None:
            return fail("plan", "give either --plan PLAN.json or --search MESH, not both", 2)
        return search_main(args)
    if args.plan is None:
        return fail("plan", "give --plan PLAN.json to write a plan, or --search MESH to search", 2)
    try:
        document, data = read_json(args.file), read_json(args.plan)
    except (OSError, ValueError) as exc:
        return fail("plan", str(exc), 2)
    try:
        graph = Graph.from_json(document)
    except GeonError as exc:
        return fail("plan", f'"{args.file}" is not a document: {exc}; run geon check to see why', 2)
    try:
        plan = read_plan(data)
    except PlanError as exc:
        return fail("plan", f'"{args.plan}" is not a plan: {exc}', 2)
    try:
        placed = apply_plan(graph, plan)
        whole = plan_splits(graph, plan).not_split
    except GeonError as exc:
        return fail("plan", f'plan "{plan.name}" does not fit "{args.file}": {exc}', 1)
    text = json.dumps(placed.to_json(), indent=2)
    if args.out == "-":
        sys.stdout.write(text + "\n")
    else:
        try:
            with open(args.out, "w", encoding="utf-8") as f:
                f.write(text)
        except OSError as exc:
            return fail("plan", f'cannot write "{args.out}": {exc.strerror or exc}', 2)
    for entry in whole:
        print(
            f"geon plan: operation {operation_name(graph, entry.operation)} runs whole: "
            f"{entry.reason}",
            file=sys.stderr,
        )
    return 0


def operation_name(graph: Graph, op_id: str) -> str:
    """An operation as people read it, its id beside (issue 35): ``"op:dot → up" in
    layers.0/attn ("<id>")`` — its name, what it writes and its scope when it has one."""
    node = graph.get(op_id)
    if node is None:
        return f'"{op_id}"'
    outs = [
        found.name
        for tid in selected_tensor_ids(node.body, "outputs")
        if (found := graph.get(tid)) is not None
    ]
    name = f"{node.name} → {', '.join(outs)}" if outs else node.name
    group = node.tags.get(GEON_TAG_PREFIX + "Group")
    scope = group.get("scope") if isinstance(group, dict) else None
    where = f" in {scope.strip('/')}" if isinstance(scope, str) and scope.strip("/") else ""
    return f'"{name}"{where} ("{op_id}")'


def search_main(args: argparse.Namespace) -> int:
    """``geon plan FILE --search MESH``: the best plans on the mesh (:mod:`.plan_search`)."""
    from geon.cli.plan_search import run_search

    return run_search(args)
