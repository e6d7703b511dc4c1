"""Plan search (issue 33): the best is the fastest candidate that fits the profile's memory, what
does not fit is never best, and the known answers: Megatron's mapping when the weights do not fit
one device (the gallery transformer, the imported encoder), data parallel with a large batch and
small weights."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from geon.cli import main
from geon.core.graph import Graph
from geon.core.plans.cost import load_profile, parse_profile
from geon.core.plans.cost.search import search_plans
from geon.examples.transformer import transformer_block
from tests.core.plans.pipeline_docs import chain

MODELS = Path(__file__).parents[2] / "interop" / "models"


def _profile(memory: float) -> Any:
    data = load_profile("h100-sxm-8").to_json()
    data["device"]["memory"] = memory
    return parse_profile(data)


def _invariants(found: dict[str, Any]) -> None:
    candidates = found["candidates"]
    fitting = [c for c in candidates if c["fits"]]
    if found["best"] is None:
        assert fitting == []
        return
    # the best is the fastest candidate that fits; what does not fit is never best
    assert found["best"]["fits"]
    assert found["best"]["seconds"] == min(c["seconds"] for c in fitting)
    assert all(c["why"].startswith("memory") for c in candidates if not c["fits"])
    assert found["best"] is candidates[0]


def test_transformer_weights_that_do_not_fit_get_megatron() -> None:
    # given the gallery block on tp = 2 and 5,000 bytes a device (data parallel holds 6,408)
    found = search_plans(transformer_block(), {"tp": 2}, _profile(5000))
    _invariants(found)
    # then the best splits heads and the MLP width over tp: Megatron's mapping
    assert found["best"]["axisMapping"] == {"H": "tp", "F": "tp"}
    assert any(not c["fits"] and c["axisMapping"] == {"B": "tp"} for c in found["candidates"])


def test_transformer_with_room_gets_data_parallel() -> None:
    found = search_plans(transformer_block(), {"tp": 2}, _profile(80e9))
    _invariants(found)
    assert found["best"]["axisMapping"] == {"B": "tp"}
    assert found["best"]["why"] == "compute"


def test_imported_encoder_weights_that_do_not_fit_get_megatron(tmp_path: Path) -> None:
    out = tmp_path / "encoder.json"
    assert main(["import", str(MODELS / "encoder.onnx"), "--dim", "batch=2", "-o", str(out)]) == 0
    graph = Graph.from_json(json.loads(out.read_text()))
    tight = search_plans(graph, {"tp": 2}, _profile(40000))
    _invariants(tight)
    # heads (d4) and the MLP width (d64) over tp, as tests/interop/test_encoder_megatron.py
    assert tight["best"]["axisMapping"] == {"d4": "tp", "d64": "tp"}
    roomy = search_plans(graph, {"tp": 2}, _profile(80e9))
    assert roomy["best"]["axisMapping"] == {"batch": "tp"}


def test_large_batch_small_weights_get_data_parallel() -> None:
    # 2^20 rows through 64-wide layers: the batch over the larger mesh axis is fastest
    found = search_plans(chain(n=1 << 20, d=64), {"dp": 4, "tp": 2}, _profile(80e9))
    _invariants(found)
    assert found["best"]["axisMapping"] == {"N": "dp"}
    assert found["complete"]


def test_nothing_fits_so_nothing_is_best() -> None:
    found = search_plans(transformer_block(), {"tp": 2}, _profile(100))
    assert found["best"] is None and found["candidates"]
    assert all(not c["fits"] for c in found["candidates"])


def test_a_pipeline_mesh_searches_pipelines() -> None:
    found = search_plans(chain(), {"pp": 2, "dp": 2}, _profile(80e9))
    _invariants(found)
    assert all(c["plan"]["pipeline"]["axis"] == "pp" for c in found["candidates"])
    assert all(0 <= c["bubble"] < 1 for c in found["candidates"])


def test_the_budget_bounds_the_search() -> None:
    found = search_plans(transformer_block(), {"dp": 2, "tp": 2}, _profile(80e9), budget=1e-9)
    assert found["complete"] is False
    assert found["searched"] <= 1


@pytest.mark.parametrize("memory", [5000.0])
def test_every_candidate_has_the_printed_shape(memory: float) -> None:
    found = search_plans(transformer_block(), {"tp": 2}, _profile(memory))
    for c in found["candidates"]:
        assert {"axisMapping", "seconds", "fits", "why", "plan", "peakBytes"} <= set(c)
