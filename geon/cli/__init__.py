"""The ``python -m geon`` command line: one module per verb under ``geon.cli``.

Each verb module defines ``HELP`` (one line), ``add_arguments(parser)`` and ``main(args) -> int``;
:data:`VERBS` maps each verb to its module (``import`` is a Python keyword, so its module is
``model_import``).
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

VERBS = {
    "check": "check",
    "run": "run",
    "render": "render",
    "shard": "shard",
    "plan": "plan",
    "cost": "cost",
    "train": "train",
    "verify": "verify",
    "puzzle": "puzzle",
    "import": "model_import",
    "export": "model_export",
    "serve": "serve",
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="geon",
        description="Check, shard, plan, cost, run and render geon / LoomGraph documents.",
    )
    sub = parser.add_subparsers(dest="verb", metavar="VERB", required=True)
    for verb, name in VERBS.items():
        module = importlib.import_module(f"geon.cli.{name}")
        verb_parser = sub.add_parser(verb, help=module.HELP, description=module.HELP)
        module.add_arguments(verb_parser)
        verb_parser.set_defaults(handler=module.main)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return int(args.handler(args))


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
