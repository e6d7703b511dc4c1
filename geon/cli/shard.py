"""``geon shard FILE --op ID --axis DIM --parts K -o OUT``: shard one operation.

Cuts the operation's index range along index dim ``DIM`` (a number, or an index axis name when
the operation has ``IndexAxes``) into ``--parts K`` blocks, blocks of ``--chunk C``, or explicit
``--sizes 4,4,2``; ``--grid H=2,N=2`` splits several dims at once. The operation's old
Applications are replaced. ``--mesh MESH_ID`` places the shards on a device mesh. The result is
written to ``OUT`` (``-`` or no ``-o``: stdout) as indented JSON; the document's other content is
kept unchanged. Exit status 0 on success, 2 when the request or the document is refused (the
message says why on stderr).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from geon.cli.fail import fail
from geon.core.errors import GeonError
from geon.core.graph import Graph
from geon.core.plans.shards import shard

HELP = "shard an operation into Applications along an index dim"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", metavar="FILE", help="the document (JSON)")
    parser.add_argument("--op", required=True, metavar="ID", help="the operation's node id")
    parser.add_argument(
        "--axis", metavar="DIM", help="index dim number or index axis name to split"
    )
    how = parser.add_mutually_exclusive_group(required=True)
    how.add_argument("--parts", type=int, metavar="K", help="K blocks, larger first")
    how.add_argument("--chunk", type=int, metavar="C", help="blocks of C, a smaller last one")
    how.add_argument("--sizes", metavar="S1,S2,...", help="explicit block sizes")
    how.add_argument("--grid", metavar="DIM=K,...", help="split several dims at once")
    parser.add_argument("--mesh", metavar="MESH_ID", help="place the shards on this Mesh node")
    parser.add_argument("-o", "--out", metavar="OUT", default="-", help="output file (- = stdout)")


def _int_list(text: str, what: str) -> list[int]:
    try:
        return [int(p) for p in text.split(",") if p.strip()]
    except ValueError:
        raise GeonError(
            f'{what} "{text}" is invalid; expected comma-separated integers such as 4,4,2'
        ) from None


def _grid(text: str) -> dict[int | str, int]:
    out: dict[int | str, int] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        dim, sep, k = part.partition("=")
        if not sep or not k.strip().isdigit():
            raise GeonError(f'grid "{text}" is invalid; expected DIM=K pairs such as H=2,N=2')
        out[dim.strip()] = int(k)
    return out


def main(args: argparse.Namespace) -> int:
    try:
        with open(args.file, "rb") as f:
            data: Any = json.loads(f.read())
    except OSError as exc:
        return fail("shard", f'cannot read "{args.file}": {exc.strerror or exc}')
    except (ValueError, RecursionError) as exc:
        return fail("shard", f'"{args.file}" is not valid JSON: {exc}; run geon check to see why')
    try:
        graph = Graph.from_json(data)
        if args.grid is not None:
            if args.axis is not None:
                return fail("shard", "--grid names its dims itself; drop --axis")
            changes = shard(graph, args.op, grid=_grid(args.grid), mesh=args.mesh)
        else:
            if args.axis is None:
                return fail("shard", "--axis is required with --parts, --chunk or --sizes")
            sizes = _int_list(args.sizes, "--sizes") if args.sizes is not None else None
            changes = shard(
                graph,
                args.op,
                dim=args.axis,
                parts=args.parts,
                chunk=args.chunk,
                sizes=sizes,
                mesh=args.mesh,
            )
    except GeonError as exc:
        return fail("shard", str(exc))
    text = json.dumps(graph.to_json(), indent=2)
    added = sum(1 for c in changes if c.old is None)
    if args.out == "-":
        sys.stdout.write(text + "\n")
    else:
        try:
            with open(args.out, "w", encoding="utf-8") as f:
                f.write(text)
        except OSError as exc:
            return fail("shard", f'cannot write "{args.out}": {exc.strerror or exc}')
    print(f'geon shard: operation "{args.op}" now has {added} applications', file=sys.stderr)
    return 0
