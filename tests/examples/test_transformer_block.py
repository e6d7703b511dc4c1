"""The gallery's transformer block (geon.examples.transformer, issue #16 item 8): it checks
clean, its logical run equals a NumPy transformer block written from the formulas (pre-norm
block as in Xiong et al., "On Layer Normalization in the Transformer Architecture", 2020; the
multi-head attention of Vaswani et al., 2017), each shipped plan runs sharded equal to the
logical run, and `python -m geon cost` prices each plan."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from geon import core as gc
from geon.core.graph import Graph
from geon.core.plans import plan_splits, read_plan
from geon.examples.transformer import PLANS, SIZES, block, transformer_block
from geon.graphs.gallery import examples

PLAN_NAMES = [p["name"] for p in PLANS]


def geon(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "geon", *args], capture_output=True, text=True, timeout=120
    )


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("transformer")
    doc = folder / "block.json"
    doc.write_text(json.dumps(transformer_block().to_json()), encoding="utf-8")
    out = {"document": doc}
    for i, plan in enumerate(PLANS):
        path = folder / f"plan{i}.json"
        path.write_text(json.dumps(plan), encoding="utf-8")
        placed = folder / f"placed{i}.json"
        done = geon("plan", "--plan", str(path), "-o", str(placed), str(doc))
        assert done.returncode == 0, done.stderr
        out[plan["name"]] = placed
    return out


def labels(graph: Graph) -> dict[str, str]:
    """Operation id -> the label of the tensor it writes; tensor id -> its label (a placed
    graph input is the producer of the collectives that move it)."""
    doc = graph.to_json()
    tensors = {n["id"]: n.get("label", "") for n in doc["nodes"] if n["type"].endswith("/Tensor")}
    return tensors | {
        n["id"]: tensors[n["body"]["outputs"]["result"][0]["tensorId"]]
        for n in doc["nodes"]
        if n["type"].endswith("/Operation")
    }


def numpy_block(x: np.ndarray[Any, Any], seed: int = 16) -> np.ndarray[Any, Any]:
    """The block from the formulas, weights drawn in the example's order."""
    s, rng = SIZES, np.random.default_rng(seed)

    def weight(shape: tuple[int, ...], fan_in: int) -> np.ndarray[Any, Any]:
        return (rng.normal(size=shape) / np.sqrt(fan_in)).round(3)

    def ln(h: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
        return (h - h.mean(-1, keepdims=True)) / np.sqrt(h.var(-1, keepdims=True) + 1e-5)

    d, hh, e, f = s["D"], s["H"], s["E"], s["F"]
    wq, wk, wv = (weight((d, hh, e), d) for _ in range(3))
    wo, w1, w2 = weight((hh, e, d), hh * e), weight((d, f), d), weight((f, d), f)
    a = ln(x)
    q, k, v = (np.einsum("bnd,dhe->bnhe", a, w) for w in (wq, wk, wv))
    scores = np.einsum("bnhe,bmhe->bnhm", q, k) / math.sqrt(e)
    p = np.exp(scores - scores.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    h1 = x + np.einsum("bnhm,bmhe,hed->bnd", p, v, wo)
    u = np.einsum("bnd,df->bnf", ln(h1), w1)
    gelu = np.vectorize(lambda t: t / 2 * (1 + math.erf(t / math.sqrt(2))))(u)
    return h1 + np.einsum("bnf,fd->bnd", gelu, w2)


def test_the_block_is_in_the_gallery_and_checks_clean(files: dict[str, Path]) -> None:
    (entry,) = [e for e in examples() if e.key == "transformer-block"]
    assert [p["name"] for p in entry.plans] == PLAN_NAMES
    assert Graph.from_json(entry.document).check() == []
    done = geon("check", str(files["document"]))
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")


def test_the_logical_run_is_a_transformer_block() -> None:
    s = SIZES
    x = np.random.default_rng(3).normal(size=(s["B"], s["N"], s["D"]))
    got = gc.evaluate(block(), {"x": x})
    np.testing.assert_allclose(got, numpy_block(x), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", PLAN_NAMES)
def test_each_plan_runs_sharded_equal_to_the_logical_run(files: dict[str, Path], name: str) -> None:
    logical = geon("run", str(files["document"]))
    sharded = geon("run", "--sharded", str(files[name]))
    assert (logical.returncode, sharded.returncode) == (0, 0), sharded.stderr
    got = json.loads(sharded.stdout)
    # equal within float tolerance: a split contracted axis sums its parts in another order
    assert set(got["max_abs_diff"]) == {"y"}
    assert got["max_abs_diff"]["y"] <= 1e-12
    # the placed document computes the same values (to rounding) as the plain one
    (want,) = json.loads(logical.stdout)["outputs"]
    (out,) = got["outputs"]
    assert (out["label"], out["shape"]) == (want["label"], want["shape"])
    for key in ("sum", "min", "max"):
        assert out[key] == pytest.approx(want[key], rel=1e-12), key


def whole(name: str) -> dict[str, list[str]]:
    """The operations a plan leaves whole, by the label they write, with the axes why."""
    graph = transformer_block()
    plan = read_plan(next(p for p in PLANS if p["name"] == name))
    names = labels(graph)
    return {names[n.operation]: sorted(n.axes) for n in plan_splits(graph, plan).not_split}


def test_data_parallel_splits_every_operation_over_the_batch() -> None:
    assert whole("Data parallel") == {}


def test_megatron_splits_every_operation() -> None:
    # Column-parallel Q, K, V and W1 split over heads H and hidden F; the output projection
    # and W2 contract the split axis and become partial products plus a sum.
    assert whole("Megatron tensor parallel") == {}


def test_the_model_axis_split_leaves_the_layer_norms_whole() -> None:
    # layer norm normalises over D, so D is not one of its index axes
    assert whole("Model axis split (worse on purpose)") == {"ln1": ["D"], "ln2": ["D"]}


def cost(files: dict[str, Path], name: str) -> dict[str, Any]:
    done = geon("cost", "--profile", "h100-sxm-8", str(files[name]))
    assert done.returncode == 0, done.stderr
    report: dict[str, Any] = json.loads(done.stdout)
    return report


def test_data_parallel_moves_nothing_in_the_forward_pass(files: dict[str, Path]) -> None:
    # By hand: x is placed split over B, every weight replicated, and every operation keeps B
    # as an index axis, so no device reads another's rows: no collective, no communication.
    report = cost(files, "Data parallel")
    assert report["collectives"] == []
    assert [d["memory"]["communication"] for d in report["devices"]] == [0, 0]
    assert [d["flops"] for d in report["devices"]] == [report["devices"][0]["flops"]] * 2


def collectives(files: dict[str, Path], name: str) -> list[tuple[str, str, str, list[str], int]]:
    """(kind, producer's output label, consumer's output label, mesh axes, bytes) per
    collective of the plan's cost report."""
    names = labels(Graph.from_json(json.loads(files[name].read_text(encoding="utf-8"))))
    return sorted(
        (c["kind"], names[c["producer"]], names[c["consumer"]], c["meshAxes"], c["bytes"])
        for c in cost(files, name)["collectives"]
    )


# One (B, N, D) float64 activation: 2 * 4 * 8 values of 8 bytes.
ACTIVATION = SIZES["B"] * SIZES["N"] * SIZES["D"] * 8


def test_megatron_has_one_all_reduce_per_layer(files: dict[str, Path]) -> None:
    # By hand (Shoeybi et al., "Megatron-LM", 2019, section 3): attention's output projection
    # and the MLP's W2 contract the split axis (H, F), so each device holds a partial (B, N, D)
    # sum, and one all-reduce over tp adds each; nothing else moves (Q, K, V, W1 are
    # column-parallel, the softmax and GELU stay on their heads / their half of F).
    assert collectives(files, "Megatron tensor parallel") == [
        ("all-reduce", "attn out partial", "attn out", ["tp"], ACTIVATION),
        ("all-reduce", "mlp out partial", "mlp out", ["tp"], ACTIVATION),
    ]


def test_the_model_axis_split_reduces_at_every_projection(files: dict[str, Path]) -> None:
    # By hand: q, k, v (B, N, H, E) and W1's output (B, N, F) contract D, each an all-reduce of
    # its partial products; H * E = D, so q, k, v move one activation each, W1's twice that.
    # And the layer norms, which normalise over D, run whole, replicated on both devices: each
    # gathers the whole of what it reads split over D, x (placed so) and the residual sum h1.
    assert collectives(files, "Model axis split (worse on purpose)") == [
        ("all-gather", "h1", "ln2", ["tp"], ACTIVATION),
        ("all-gather", "x", "ln1", ["tp"], ACTIVATION),
        ("all-reduce", "k partial", "k", ["tp"], ACTIVATION),
        ("all-reduce", "q partial", "q", ["tp"], ACTIVATION),
        ("all-reduce", "up partial", "up", ["tp"], 2 * ACTIVATION),
        ("all-reduce", "v partial", "v", ["tp"], ACTIVATION),
    ]


def test_the_worse_plan_costs_more_time_than_megatron(files: dict[str, Path]) -> None:
    megatron = cost(files, "Megatron tensor parallel")["time"]
    worse = cost(files, "Model axis split (worse on purpose)")["time"]
    assert worse["upper"] > megatron["upper"]
    assert worse["lower"] >= megatron["lower"]
