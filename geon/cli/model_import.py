"""Scaffold for the ``model_import`` verb (being built this session; replaced before it lands)."""

from __future__ import annotations

import argparse
import sys

HELP = "import an ONNX model as a geon document"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("rest", nargs="*")


def main(args: argparse.Namespace) -> int:
    print("not built yet", file=sys.stderr)
    return 2
