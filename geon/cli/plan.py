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
whole (a contracted axis), saying why and what that forces under ``--profile`` (issue 35):
``geon plan: operation "op:layer_norm → ln1" in layers.0/ln ("<id>") runs whole: it contracts or
reduces "D" …; forces 8 all-gathers of 1 MiB before it``. Every operation is named as people read
it with its id beside, in a refusal too. Exit status 0 on success; 1 when the plan does not fit the
document (the message names the operation or input and why); 2 when a file cannot be read, is
not JSON, or is not a document or a plan.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from typing import Any

from geon.cli.fail import fail
from geon.cli.files import read_json
from geon.core.errors import GeonError
from geon.core.graph import OPERATION, Graph
from geon.core.nodes import GROUP, selected_tensor_ids
from geon.core.plans import PlanError, apply_plan, plan_splits, read_plan
from geon.core.plans.cost import DEFAULT_PROFILE
from geon.core.plans.cost.collectives import infer_collectives
from geon.core.plans.cost.placed import read_placed
from geon.core.plans.cost.profiles import load_profile

HELP = "write a shard plan (mesh, axis mapping, inputs, spec) into a document"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", metavar="FILE", help="the document (JSON)")
    parser.add_argument("--plan", metavar="PLAN.json", help="the plan (JSON)")
    parser.add_argument("--search", metavar="MESH", help="search plans on a mesh like dp=2,tp=4")
    parser.add_argument(
        "--profile",
        default=DEFAULT_PROFILE,
        help="hardware profile (--search; and what running an operation whole forces)",
    )
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
        said = labelled(graph, str(exc))
        return fail("plan", f'plan "{plan.name}" does not fit "{args.file}": {said}', 1)
    try:
        moves = infer_collectives(read_placed(placed), load_profile(args.profile)) if whole else []
    except GeonError as exc:
        return fail("plan", str(exc), 2)
    text = json.dumps(placed.to_json(), indent=2)
    if args.out == "-":
        sys.stdout.write(text + "\n")
    else:
        try:
            with open(args.out, "w", encoding="utf-8") as f:
                f.write(text)
        except OSError as exc:
            return fail("plan", f'cannot write "{args.out}": {exc.strerror or exc}', 2)
    collectives = [c.to_json() for c in moves]
    for entry in whole:
        forced = forced_by(entry.operation, collectives)
        print(
            f"geon plan: operation {operation_name(graph, entry.operation)} runs whole: "
            f"{entry.reason}{f'; {forced}' if forced else ''}",
            file=sys.stderr,
        )
    return 0


def show_bytes(n: float) -> str:
    """Bytes as the editor shows them (frontend/src/model/costs.ts's ``showBytes``): ``"96 B"``,
    ``"1.5 KiB"``, ``"1 MiB"``.

    >>> show_bytes(96), show_bytes(1536), show_bytes(2**20), show_bytes(3 * 2**30)
    ('96 B', '1.5 KiB', '1 MiB', '3 GiB')
    """
    if n < 1024:
        return f"{n:g} B"
    for unit, size in (("KiB", 2**10), ("MiB", 2**20), ("GiB", 2**30)):
        if n < size * 1024 or unit == "GiB":
            return f"{round(n / size, 1):g} {unit}"
    raise AssertionError("unreachable")


def forced_by(op_id: str, collectives: list[dict[str, Any]]) -> str:
    """What running operation ``op_id`` whole forces: the collectives into it, then out of it,
    by kind, the most bytes first (the editor's ``forcedBy``, model/planWhy.ts); ``""`` for none.

    >>> moves = [{"kind": "all-gather", "producer": "a", "consumer": "ln", "bytes": 2**19}] * 2
    >>> after = {"kind": "permute", "producer": "ln", "consumer": "b", "bytes": 8}
    >>> forced_by("ln", [*moves, after])
    'forces 2 all-gathers of 1 MiB before it and 1 permute of 8 B after it'
    """
    parts = []
    for side, where in (("consumer", "before it"), ("producer", "after it")):
        kinds: dict[str, list[int]] = {}
        for c in collectives:
            if c[side] == op_id:
                k = kinds.setdefault(c["kind"], [0, 0])
                k[0], k[1] = k[0] + 1, k[1] + c["bytes"]
        for kind, (n, size) in sorted(kinds.items(), key=lambda item: (-item[1][1], item[0])):
            parts.append(f"{n} {kind}{'' if n == 1 else 's'} of {show_bytes(size)} {where}")
    return f"forces {' and '.join(parts)}" if parts else ""


def labelled(graph: Graph, message: str) -> str:
    """``message`` with each quoted node id named as people read it, its id beside (issue 35):
    an operation as :func:`operation_name` names it, another node ``"x" ("<id>")``; a node
    without a name of its own, and anything else quoted, as it was."""

    def name(found: re.Match[str]) -> str:
        node = graph.get(found.group(1))
        if node is None or node.name == node.id:
            return found.group(0)
        if node.type == OPERATION:
            return operation_name(graph, node.id)
        return f'"{node.name}" ("{node.id}")'

    return re.sub(r'"([^"\s]{1,80})"', name, message)


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
    group = node.tags.get(GROUP)
    scope = group.get("scope") if isinstance(group, dict) else None
    where = f" in {scope.strip('/')}" if isinstance(scope, str) and scope.strip("/") else ""
    return f'"{name}"{where} ("{op_id}")'


def search_main(args: argparse.Namespace) -> int:
    """``geon plan FILE --search MESH``: the best plans on the mesh (:mod:`.plan_search`)."""
    from geon.cli.plan_search import run_search

    return run_search(args)
