"""``geon run``: not yet implemented (its issue has not landed)."""

from __future__ import annotations

import argparse
import sys

HELP = "run (not yet implemented)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("rest", nargs=argparse.REMAINDER)


def main(args: argparse.Namespace) -> int:
    print("geon run: not yet implemented", file=sys.stderr)
    return 2
