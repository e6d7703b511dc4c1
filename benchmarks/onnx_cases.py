"""ONNX's own backend node tests through geon (issue #20): import, run on geon's executor, compare.

Run: ``.venv/bin/python benchmarks/onnx_cases.py [--verbose]``

The cases ship in the ``onnx`` wheel (``onnx.backend.test.case.node.collect_testcases()``: each
has a model, inputs and the expected outputs, computed by ONNX's reference). A case counts for
an operator when every node of its model is an operator geon imports
(:data:`geon.interop.onnx_import.SUPPORTED`); it passes when every output equals the expected
one within ONNX's own backend tolerance (``rtol=1e-3``, ``atol=1e-7``, as
``onnx.backend.test.runner`` compares) and has the expected shape. A case geon refuses on import
(an attribute, a dtype) is listed with the refusal's one line. Prints, per operator,
``passed/total`` and the refused or failing cases. ``tests/interop/test_onnx_cases.py`` keeps the
list of cases that pass.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass
class Outcome:
    """One case: its name, its operator, and ``ok`` or why not."""

    name: str
    op: str
    ok: bool
    why: str = ""


def _case_op(case: Any) -> str:
    types = sorted({n.op_type for n in case.model.graph.node if n.op_type != "Constant"})
    return types[0] if len(types) == 1 else "+".join(types)


def supported_cases() -> list[Any]:
    """The backend node cases whose every node is an operator geon imports."""
    from onnx.backend.test.case.node import collect_testcases

    from geon.interop.onnx_import import SUPPORTED

    out = []
    for case in collect_testcases():
        if case.model is None:
            continue
        nodes = case.model.graph.node
        if not nodes or any(n.domain not in ("", "ai.onnx") for n in nodes):
            continue
        if all(n.op_type in SUPPORTED for n in nodes):
            out.append(case)
    return out


ARGUMENT_OPS = ("Reshape", "Squeeze", "Unsqueeze", "Gather", "Split")


def arguments(case: Any) -> set[str]:
    """Graph inputs that are a node's axes, shape or indices: geon needs them when importing
    (the cases feed them at run time; an exported model holds them as constants)."""
    return {
        n.input[1]
        for n in case.model.graph.node
        if (n.op_type.startswith("Reduce") or n.op_type in ARGUMENT_OPS) and len(n.input) > 1
    }


def run_case(case: Any) -> Outcome:
    """Import ``case.model``, run every data set on geon's executor and compare."""
    from geon.core.errors import GeonError
    from geon.execute import run
    from geon.interop.onnx_import import import_onnx

    op = _case_op(case)
    try:
        names = [vi.name for vi in case.model.graph.input]
        axes_inputs = arguments(case)
        for inputs, expected in case.data_sets:
            feeds = dict(zip(names, inputs, strict=False))
            known = {k: v for k, v in feeds.items() if k in axes_inputs}
            imp = import_onnx(case.model, known=known)
            feeds = {k: v for k, v in feeds.items() if k not in known}
            result = run(imp.graph, {**feeds, **imp.weights}).by_key()
            for vi, want in zip(case.model.graph.output, expected, strict=True):
                got = result.get(vi.name)
                if got is None:
                    return Outcome(case.name, op, False, f'output "{vi.name}" is missing')
                want = np.asarray(want)
                if got.shape != want.shape:
                    return Outcome(
                        case.name, op, False, f"shape {got.shape}, expected {want.shape}"
                    )
                if not np.allclose(got, want, rtol=1e-3, atol=1e-7, equal_nan=True):
                    diff = np.max(np.abs(got.astype(np.float64) - want.astype(np.float64)))
                    return Outcome(case.name, op, False, f"max abs diff {diff:.3g}")
    except GeonError as exc:
        return Outcome(case.name, op, False, f"refused: {exc}")
    return Outcome(case.name, op, True)


def roundtrip_case(case: Any) -> Outcome:
    """Import ``case.model``, export it back to ONNX, run that in onnxruntime and compare."""
    import onnxruntime as ort

    from geon.core.errors import GeonError
    from geon.interop.onnx_export import to_onnx
    from geon.interop.onnx_import import import_onnx

    op = _case_op(case)
    names = [vi.name for vi in case.model.graph.input]
    axes_inputs = arguments(case)
    try:
        for inputs, expected in case.data_sets:
            feeds = dict(zip(names, inputs, strict=False))
            known = {k: v for k, v in feeds.items() if k in axes_inputs}
            imp = import_onnx(case.model, known=known)
            model = to_onnx(imp.graph, weights=imp.weights)
            session = ort.InferenceSession(model.SerializeToString())
            wanted = [i.name for i in session.get_inputs()]
            got = session.run(None, {k: v for k, v in feeds.items() if k in wanted})
            by_name = dict(zip([o.name for o in session.get_outputs()], got, strict=True))
            for vi, want in zip(case.model.graph.output, expected, strict=True):
                g = by_name.get(vi.name)
                if g is None or g.shape != np.asarray(want).shape:
                    return Outcome(case.name, op, False, f'output "{vi.name}" differs in shape')
                if not np.allclose(g, want, rtol=1e-3, atol=1e-7, equal_nan=True):
                    return Outcome(case.name, op, False, f'output "{vi.name}" differs')
    except GeonError as exc:
        return Outcome(case.name, op, False, f"refused: {exc}")
    return Outcome(case.name, op, True)


def run_cases() -> list[Outcome]:
    """Every supported case's outcome."""
    return [run_case(c) for c in supported_cases()]


def main(argv: list[str] | None = None) -> int:
    """Print passed/total per operator, then the cases that do not pass and why."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--verbose", action="store_true", help="also list the passing cases")
    args = parser.parse_args(argv)
    outcomes = run_cases()
    per_op: dict[str, list[Outcome]] = {}
    for o in outcomes:
        per_op.setdefault(o.op, []).append(o)
    for op, items in sorted(per_op.items()):
        passed = sum(o.ok for o in items)
        print(f"{op:28s} {passed:3d}/{len(items):<3d}")
    total = sum(o.ok for o in outcomes)
    print(f"{'all':28s} {total:3d}/{len(outcomes):<3d}")
    for o in outcomes:
        if not o.ok or args.verbose:
            print(f"  {o.name}: {'ok' if o.ok else o.why[:200]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
