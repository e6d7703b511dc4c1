"""Scaffold for the ``model_export`` verb (being built this session; replaced before it lands)."""

from __future__ import annotations

import argparse
import sys

HELP = "export a geon document as ONNX, NumPy, einsum or Python"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("rest", nargs="*")


def main(args: argparse.Namespace) -> int:
    print("not built yet", file=sys.stderr)
    return 2
