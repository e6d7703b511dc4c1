"""A training step is an ordinary document (issue 32): a plan's sharded run equals its logical
run, and the step exports to ONNX that onnxruntime runs to the same values."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnxruntime as ort

from geon import core as gc
from geon.core.autodiff import Forward, merge, training_step
from geon.core.plans import apply_plan
from geon.execute import run
from geon.interop.onnx_export import to_onnx
from geon.interop.onnx_import import import_onnx
from tests.autodiff.test_ledger import _step

MODELS = Path(__file__).parents[1] / "interop" / "models"


def test_a_data_parallel_step_runs_sharded_equal_to_logical() -> None:
    plan = {"name": "dp", "mesh": {"name": "m", "axes": {"dp": 4}}, "axisMapping": {"B": "dp"},
            "inputs": {"x": {"over": {"B": "dp"}}, "t": {"over": {"B": "dp"}}}}  # fmt: skip
    result = run(apply_plan(_step("adam"), plan), seed=0, sharded=True)
    assert set(result.max_abs_diff) >= {"loss", "w1.next", "w2.m.next", "w2.v.next", "step.next"}
    assert max(result.max_abs_diff.values()) <= 1e-5


def test_the_mlp_step_exports_to_onnx_and_runs_equal_in_onnxruntime() -> None:
    imp = import_onnx(MODELS / "mlp.onnx", dims={"batch": 4})
    y = Forward(imp.graph).by_label("y")
    r = gc.placeholder(list(y.axes), name="r", dtype="float32")
    doc = merge(imp.graph, [gc.sum(gc.multiply(y, r), name="loss")], {})
    step = training_step(doc, optimizer="momentum", lr=0.05)
    rng = np.random.default_rng(3)
    feeds = {
        "x": rng.standard_normal((4, 16)).astype(np.float32),
        "r": rng.standard_normal(y.shape).astype(np.float32),
        **imp.weights,
        **{f"{k}.m": np.zeros_like(v) for k, v in imp.weights.items()},
    }
    want = run(step, feeds).by_key()
    model = to_onnx(step, weights=imp.weights)
    session = ort.InferenceSession(model.SerializeToString())
    names = [i.name for i in session.get_inputs()]
    got = dict(
        zip(
            [o.name for o in session.get_outputs()],
            session.run(None, {n: feeds[n] for n in names if n in feeds}),
            strict=True,
        )
    )
    for key in ("loss", "0.weight.next", "4.bias.m.next"):
        np.testing.assert_allclose(got[key], want[key], rtol=1e-5, atol=1e-6)
