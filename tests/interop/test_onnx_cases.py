"""ONNX's own backend node tests (``onnx.backend.test.case.node``, shipped in the onnx wheel):
every case of an operator geon imports is imported, run on geon's executor and compared with
the outputs ONNX's reference computed (benchmarks/onnx_cases.py does the work and prints the
per-operator report).

``onnx_passing.txt`` is the pass list: each case there must pass. Every other supported case
must be refused on import with a one-line reason (an element type, a length-0 dim, a value
that is not a tensor) — never a wrong number or a missing output.
"""

from __future__ import annotations

import importlib.util
import sys
import warnings
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent.parent
PASSING = (Path(__file__).parent / "onnx_passing.txt").read_text().split()


def _cases_module() -> Any:
    spec = importlib.util.spec_from_file_location(
        "onnx_cases", ROOT / "benchmarks" / "onnx_cases.py"
    )
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules["onnx_cases"] = mod  # its dataclass looks its module up
    spec.loader.exec_module(mod)
    return mod


CASES = _cases_module()


@pytest.fixture(scope="module")
def by_name() -> dict[str, Any]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the onnx cases' own overflow warnings
        return {c.name: c for c in CASES.supported_cases()}


def test_the_pass_list_is_most_of_the_supported_cases(by_name: dict[str, Any]) -> None:
    # given the cases of supported operators; then the pass list names only such cases
    assert set(PASSING) <= set(by_name)
    assert len(PASSING) >= 230


@pytest.mark.parametrize("name", PASSING)
def test_backend_case_passes(name: str, by_name: dict[str, Any]) -> None:
    # when the case is imported and run on geon's executor
    outcome = CASES.run_case(by_name[name])
    # then every output equals ONNX's expected one within the backend tolerance
    assert outcome.ok, outcome.why


def test_every_other_supported_case_is_refused_with_a_reason(by_name: dict[str, Any]) -> None:
    for name, case in by_name.items():
        if name in PASSING:
            continue
        outcome = CASES.run_case(case)
        assert not outcome.ok
        # then the reason is a refusal on import, one line, not a wrong result
        assert outcome.why.startswith("refused: "), (name, outcome.why)
        assert "\n" not in outcome.why


# onnxruntime (1.32, CPU) has no kernel for these element types: the exported model is right
# (onnx.checker passes) but cannot run there.
NO_ORT_KERNEL = {
    "test_max_int16": "Max on int16",
    "test_min_int16": "Min on int16",
    "test_reduce_max_bool_inputs": "ReduceMax on bool",
    "test_reduce_min_bool_inputs": "ReduceMin on bool",
}


@pytest.mark.parametrize("name", [n for n in PASSING if n not in NO_ORT_KERNEL])
def test_backend_case_exported_back_to_onnx_runs_equal_in_onnxruntime(
    name: str, by_name: dict[str, Any]
) -> None:
    # when the imported case is exported to ONNX and run in onnxruntime
    outcome = CASES.roundtrip_case(by_name[name])
    # then its outputs equal ONNX's expected ones again
    assert outcome.ok, outcome.why
