"""The conformance suite (issue 31): every placed plan of tests/engines/cases.py, and the
imported encoder layer under Megatron, is compiled by XLA on 8 CPU host devices; the collectives
geon predicts equal the compiled ones (kind and per-device bytes, or totals per kind where XLA
combines them) or differ by a named rule of docs/engines.md, and the results equal the logical
NumPy run. One compile per plan."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from geon.cli import main
from geon.core.graph import Graph
from geon.core.plans import apply_plan
from geon.core.plans.cost import load_profile
from geon.engines import run_on_jax
from geon.interop.verify import RULES, document_kernels, match, predicted_records
from tests.engines.cases import cases

PROFILE = load_profile("cpu-host")
MODELS = Path(__file__).parent.parent / "interop" / "models"
CASES = cases()


def conform(graph: Graph) -> dict[str, Any]:
    """Run ``graph`` on JAX beside the logical run, and match the collectives of the one
    compiled program with geon's."""
    assert [i for i in graph.check() if i.severity == "error"] == []
    summary, done = run_on_jax(graph, None, 0)
    report = match(predicted_records(graph, PROFILE), done.collectives(), document_kernels(graph))
    report["diff"] = summary["max_abs_diff"]
    return report


def test_the_suite_has_at_least_thirty_plans() -> None:
    assert len(CASES) + len(ENCODER_PLANS) >= 30


@pytest.mark.parametrize("name", [name for name, _ in CASES])
def test_predicted_collectives_are_the_compiled_ones_and_results_equal_the_logical_run(
    host_devices: int, name: str
) -> None:
    # given a placed plan compiled by XLA on the forced host devices
    build = dict(CASES)[name]
    report = conform(build())
    # then every collective matches one of the other side, or a named rule explains it
    rules = {x["rule"] for x in (*report["predicted"], *report["compiled"])}
    assert report["agrees"], json.dumps(report, indent=1, default=str)
    assert rules <= set(RULES)
    # and the results equal the logical NumPy run's
    assert report["diff"] and max(report["diff"].values()) < 1e-4, report["diff"]


def test_megatron_compiles_to_two_all_reduces_of_the_activation(host_devices: int) -> None:
    # given the gallery transformer under Megatron (B, N, D = 2, 4, 8 in float64)
    report = conform(dict(CASES)["transformer-Megatron tensor parallel"]())
    # then XLA compiled exactly the two all-reduces of (B, N, D) geon predicts, equal
    kinds = Counter((c["kind"], c["bytesPerDevice"], c["rule"]) for c in report["compiled"])
    assert kinds == Counter({("all-reduce", 2 * 4 * 8 * 8, "equal"): 2})


def test_a_2x4_mesh_all_reduces_half_the_batch_per_device(host_devices: int) -> None:
    # given the MLP with N over dp (2) and F over tp (4)
    report = conform(dict(CASES)["mlp-2x4-dp-tp"]())
    # then one all-reduce of f32[N/2, D] per device, in two groups of four
    [c] = report["compiled"]
    assert (c["kind"], c["bytesPerDevice"], c["devices"], c["groups"]) == (
        "all-reduce", N_HALF_D_BYTES, 4, 2)  # fmt: skip
    [p] = report["predicted"]
    assert (p["bytesPerDevice"], p["groups"], p["rule"]) == (N_HALF_D_BYTES, 2, "equal")


N_HALF_D_BYTES = 8 // 2 * 4 * 4


def test_the_worse_plan_differs_by_the_layer_norm_statistics_rule(host_devices: int) -> None:
    # given the transformer with D over tp: layer norms run whole on a split D
    report = conform(dict(CASES)["transformer-Model axis split (worse on purpose)"]())
    rules = Counter(c["rule"] for c in report["compiled"])
    # then XLA all-reduces the statistics (small) where geon gathers, named by the rule
    assert rules["layer-norm-statistics"] >= 2
    assert report["agrees"]


@pytest.fixture(scope="module")
def encoder(tmp_path_factory: pytest.TempPathFactory) -> Graph:
    """The imported PyTorch encoder layer (tests/interop/models/encoder.onnx), batch 2."""
    out = tmp_path_factory.mktemp("encoder") / "encoder.json"
    assert main(["import", str(MODELS / "encoder.onnx"), "--dim", "batch=2", "-o", str(out)]) == 0
    return Graph.from_json(json.loads(out.read_text()))


_HEADS, _FFN = {"over": {"d4": "tp"}}, {"over": {"d64": "tp"}}
ENCODER_PLANS = {
    "megatron": (
        {"tp": 4}, {"d4": "tp", "d64": "tp"},
        {"onnx::MatMul_193": _HEADS, "layer.self_attn.in_proj_bias": _HEADS,
         "layer.self_attn.out_proj.weight": _HEADS, "onnx::MatMul_201": _FFN,
         "layer.linear1.bias": _FFN, "onnx::MatMul_202": _FFN},
        ["all-reduce", "all-reduce"],
    ),
    "data-parallel": ({"dp": 2}, {"batch": "dp"}, {}, []),
    "2x4-dp-megatron": ({"dp": 2, "tp": 4}, {"batch": "dp", "d4": "tp", "d64": "tp"}, {},
                        ["send", "all-reduce", "send", "all-reduce"]),
}  # fmt: skip


@pytest.mark.parametrize("plan", list(ENCODER_PLANS))
def test_the_imported_encoder_under_its_plans(host_devices: int, encoder: Graph, plan: str) -> None:
    # given the imported PyTorch encoder layer under a plan
    mesh, mapping, inputs, kinds = ENCODER_PLANS[plan]
    placed = apply_plan(encoder, {"name": plan, "mesh": {"axes": mesh}, "axisMapping": mapping,
                                  "inputs": inputs})  # fmt: skip
    report = conform(placed)
    # then geon's collectives are the compiled ones (Megatron's two all-reduces), or named, and
    # the results agree with the logical run
    assert report["agrees"], json.dumps(report, indent=1, default=str)
    assert [p["kind"] for p in report["predicted"]] == kinds
    assert max(report["diff"].values()) < 1e-4


def test_a_re_split_compiles_to_the_one_all_gather_geon_predicts(host_devices: int) -> None:
    # given the first dot and relu over N and the second dot over D, on 4 devices
    report = conform(dict(CASES)["mlp-resplit-all-gather"]())
    # then the hidden tensor (F, N) in float32 is gathered whole, once, on both sides
    assert [(p["kind"], p["bytesPerDevice"], p["rule"]) for p in report["predicted"]] == [
        ("all-gather", 16 * 8 * 4, "equal")
    ]
    assert [c["kind"] for c in report["compiled"]] == ["all-gather"]
