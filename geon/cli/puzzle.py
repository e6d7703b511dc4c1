"""``geon puzzle check PUZZLE.json SOLUTION.json [--draws N] [--seed S]``: check a puzzle
solution (issue 19; see ``geon/learn/content/README.md``).

Prints one JSON object ``{"solved": bool, "draws": int, "counterexample"?: {"axes": {name:
length}, "message", "inputs": {label: {"axes", "values"}}, "got": {"axes", "values"},
"expected": {"axes", "values"}}, "issues"?: [{"severity", "summary", "message", "nodes"}]}``
(issue 36: the failing draw shrunk, its inputs and both results; the solution's issues as the
editor shows them inside the puzzle, its own pattern left out). Exit status: 0 solved, 1 not
solved, 2 a file that cannot be read or is malformed (one line on stderr naming what is wrong).
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from geon.cli.fail import fail
from geon.learn.content.puzzles import MAX_DRAWS, PuzzleError, check_puzzle

HELP = "check a puzzle solution (JSON)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    check = sub.add_parser("check", help="check SOLUTION against PUZZLE on random draws")
    check.add_argument("puzzle", metavar="PUZZLE", help="the puzzle (JSON)")
    check.add_argument("solution", metavar="SOLUTION", help="the solution, a geon document (JSON)")
    check.add_argument(
        "--draws", type=int, default=50, help=f"draws of axis lengths (1 to {MAX_DRAWS})"
    )
    check.add_argument("--seed", type=int, default=0, help="seed of the draws and values")


def _read(path: str, what: str) -> Any:
    try:
        with open(path, "rb") as f:
            return json.loads(f.read())
    except OSError as exc:
        raise PuzzleError(f'cannot read {what} "{path}": {exc.strerror or exc}') from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise PuzzleError(f'{what} "{path}" is not JSON: {exc}') from None


def main(args: argparse.Namespace) -> int:
    try:
        puzzle = _read(args.puzzle, "the puzzle")
        solution = _read(args.solution, "the solution")
        result = check_puzzle(puzzle, solution, draws=args.draws, seed=args.seed)
    except PuzzleError as exc:
        return fail("puzzle check", str(exc))
    print(json.dumps(result.to_json(), ensure_ascii=False))
    return 0 if result.solved else 1
