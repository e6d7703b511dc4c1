"""``geon train FILE -o STEP.json --optimizer sgd|momentum|adam --lr LR [--loss LABEL]``: write
the training step of a document (DESIGN.md §11, docs/training.md).

The step is an ordinary document: the forward graph, its backward graph (operations scoped
``backward/...``) and the optimizer's update (``optimizer/...``). It reads the same inputs and
variables plus the optimizer state (``<name>.m``, ``<name>.v``, ``step``) and outputs ``loss``
and every ``.next``. The loss is the tensor labelled ``--loss`` (default ``loss``), a scalar.
``-o -`` writes to stdout. Exit status 0 on success; 2 when a file cannot be read or is not JSON,
or the document or an option is refused (one line on stderr says why).
"""

from __future__ import annotations

import argparse
import json
import sys

from geon.cli.fail import fail
from geon.cli.files import read_json
from geon.core.autodiff import OPTIMIZERS, training_step
from geon.core.errors import GeonError
from geon.core.graph import Graph

HELP = "write the training step (forward, backward, optimizer update) of a document"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", metavar="FILE", help="the forward document (JSON)")
    parser.add_argument("-o", "--out", required=True, metavar="STEP", help="output (- = stdout)")
    parser.add_argument("--optimizer", choices=OPTIMIZERS, default="sgd", help="default sgd")
    parser.add_argument("--lr", type=float, required=True, metavar="LR", help="learning rate")
    parser.add_argument("--loss", default="loss", metavar="LABEL", help='default "loss"')


def main(args: argparse.Namespace) -> int:
    try:
        data = read_json(args.file)
    except (OSError, ValueError) as exc:
        return fail("train", str(exc))
    try:
        step = training_step(
            Graph.from_json(data), optimizer=args.optimizer, lr=args.lr, loss=args.loss
        )
    except GeonError as exc:
        return fail("train", str(exc))
    text = json.dumps(step.to_json(), indent=1)
    if args.out == "-":
        sys.stdout.write(text + "\n")
        return 0
    try:
        with open(args.out, "w", encoding="utf-8") as f:
            f.write(text + "\n")
    except OSError as exc:
        return fail("train", f'cannot write "{args.out}": {exc.strerror or exc}')
    return 0
