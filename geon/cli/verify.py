"""``geon verify PLACED.json [--devices N] [--profile P] [--json]``: geon's predicted collectives
beside those XLA compiles for the same plan (DESIGN.md §10, issue 31).

The document's plan is lowered to JAX (:mod:`geon.interop.jax_export`) and compiled by XLA's SPMD
partitioner on the plan's mesh (on one CPU host, ``N`` forced host devices: ``--devices``,
default the mesh's size; jax must be installed: ``pip install 'jax[cpu]'``). Each predicted
collective (kind, mesh axes, per-device bytes, the edge by labels) is printed beside the compiled
one it matches, and every difference is named by a rule of docs/engines.md
(:mod:`geon.interop.verify`). ``--json`` prints the report as one JSON object instead. Exit status
0 when every collective matches or is explained by a rule, 1 when one is unexplained, 2 when the
request or the document is refused, a document with no placed plan among them (one line on stderr
says why).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from geon.cli.fail import fail
from geon.cli.files import read_json
from geon.core.errors import GeonError
from geon.core.graph import Graph
from geon.core.plans.cost import load_profile

HELP = "compile a placed plan with XLA and match its collectives with geon's predictions"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", metavar="PLACED.json", help="the placed document")
    parser.add_argument("--devices", metavar="N", help="CPU host devices to force (>= the mesh)")
    parser.add_argument("--profile", metavar="NAME_OR_FILE", help="hardware profile (cost model)")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")


def _row(record: dict[str, Any] | None, predicted: bool) -> str:
    if record is None:
        return "-"
    text = f"{record['kind']} {record['bytesPerDevice']} B/device"
    if predicted:
        axes = ",".join(record.get("meshAxes", []))
        edge = f"{record.get('producerLabel')} -> {record.get('consumerLabel')}"
        return f"{text} over ({axes}) x{record['groups']}, {record.get('tensorLabel')}: {edge}"
    combined = f", {record['combined']} combined" if record["combined"] > 1 else ""
    return f"{text}, {record['devices']} devices x{record['groups']}{combined}"


def _table(report: dict[str, Any]) -> str:
    lines = [f"{'rule':<24}  {'predicted (geon)':<70}  compiled (XLA)"]
    compiled = report["compiled"]
    shown: set[int] = set()
    for p in report["predicted"]:
        c = compiled[p["match"]] if p["match"] is not None else None
        if p["match"] is not None:
            shown.add(p["match"])
        lines.append(f"{p['rule']:<24}  {_row(p, True):<70}  {_row(c, False)}")
    for j, c in enumerate(compiled):
        if j not in shown:
            lines.append(f"{c['rule']:<24}  {'-':<70}  {_row(c, False)}")
    verdict = "agrees" if report["agrees"] else f"{report['unexplained']} unexplained"
    lines.append(
        f"{len(report['predicted'])} predicted, {len(compiled)} compiled on "
        f"{report['devices']} devices ({report['compileSeconds']:.2f} s to compile): {verdict}"
    )
    return "\n".join(lines)


def main(args: argparse.Namespace) -> int:
    from geon.interop.jax_engine import INSTALL, force_host_devices, jax_available
    from geon.interop.jax_lowering import lower_shardings

    devices = None
    if args.devices is not None:
        try:
            devices = int(args.devices)
        except ValueError:
            devices = -1
        if not 1 <= devices <= 4096:
            return fail(
                "verify", f'--devices "{args.devices}" is invalid; expected an integer 1..4096'
            )
    if not jax_available():
        return fail(
            "verify", f"verify compiles with XLA and needs jax, which is not installed: {INSTALL}"
        )
    try:
        data = read_json(args.file)
    except (OSError, ValueError) as exc:
        return fail("verify", str(exc))
    try:
        profile = load_profile(args.profile)
        graph = Graph.from_json(data)
        errors = [i for i in graph.check() if i.severity == "error"]
        if errors:
            return fail(
                "verify",
                f'"{args.file}" has {len(errors)} error issue(s), first {errors[0].constraint}: '
                f"{errors[0].message}; run geon check {args.file} to see them all",
            )
        lowering = lower_shardings(graph)
        if not lowering.mesh_axes:
            return fail(
                "verify",
                f'"{args.file}" has no placed plan: nothing to verify; write one with geon plan '
                f"{args.file} --plan PLAN.json -o PLACED.json",
            )
        need = lowering.devices
        if devices is not None and devices < need:
            return fail(
                "verify", f"--devices {devices} is fewer than the plan's mesh needs ({need})"
            )
        force_host_devices(devices or need)
        from geon.interop.verify import verify

        report = verify(graph, profile)
    except GeonError as exc:
        return fail("verify", str(exc))
    except Exception as exc:  # a bug must still reach the user as one line, not a traceback
        return fail("verify", f"the compile failed unexpectedly ({type(exc).__name__}: {exc})")
    sys.stdout.write((json.dumps(report) if args.json else _table(report)) + "\n")
    return 0 if report["agrees"] else 1
