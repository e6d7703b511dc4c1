"""Variables, the training step's document and its refusals, and ``geon train``."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from geon import core as gc
from geon.core.autodiff import AutodiffError, training_step
from geon.core.errors import GeonError
from geon.core.graph import OPERATION, TENSOR, VARIABLE, Graph
from geon.execute import run
from geon.interop.onnx_import import import_onnx
from tests.processes import geon

MODELS = Path(__file__).parents[1] / "interop" / "models"
GROUP = "urn:geon:2026-11:tag_types.jsd#/tags/Group"
B, D, E = gc.Axis("B", 4), gc.Axis("D", 3), gc.Axis("E", 2)


def _regression() -> Graph:
    w = gc.variable([D - 1, E], name="w", dtype="float32", init={"kind": "normal", "scale": 0.5})
    b = gc.variable([E], name="b", dtype="float32", init="zeros")
    x = gc.placeholder([B, D], name="x", dtype="float32")
    t = gc.placeholder([B, E], name="t", dtype="float32")
    y = gc.add(gc.dot(x, w), b, name="y")
    return gc.graph([gc.mean(gc.square(y - t), name="loss")])


def test_variable_tag_is_written_checked_and_initialised_by_seed() -> None:
    # given a document with two variables
    doc = _regression()
    tagged = {n.label: n.tags[VARIABLE] for n in doc.of_type(TENSOR) if VARIABLE in n.tags}
    assert tagged == {
        "w": {"init": {"kind": "normal", "scale": 0.5}},
        "b": {"init": {"kind": "zeros"}},
    }
    assert doc.check() == []
    feeds = {"x": np.ones((4, 3), np.float32), "t": np.zeros((4, 2), np.float32)}
    # when it runs without the variables, they come from their init rule and the seed
    again = run(doc, feeds, seed=3).by_key()["loss"]
    assert run(doc, feeds, seed=3).by_key()["loss"] == again
    assert run(doc, feeds, seed=4).by_key()["loss"] != again
    # and a fed variable wins over its rule
    fed = run(doc, {**feeds, "w": np.zeros((3, 2), np.float32)}).by_key()["loss"]
    assert float(fed) == 0.0


def test_a_bad_variable_tag_is_a_schema_issue_naming_the_node() -> None:
    data = _regression().to_json()
    for node in data["nodes"]:
        if node.get("label") == "w":
            node["tags"][VARIABLE] = {"init": {"kind": "glorot"}}
    issues = Graph.from_json(data).check()
    assert {i.constraint for i in issues} == {"SchemaConformance"}


def test_bad_init_rules_are_refused_naming_the_value() -> None:
    with pytest.raises(GeonError, match='kind "glorot" is unknown; expected one of'):
        gc.variable([D], init="glorot")
    with pytest.raises(GeonError, match='scale "-1" is invalid'):
        gc.variable([D], init={"kind": "normal", "scale": -1})


def test_onnx_initializers_import_as_variables() -> None:
    imp = import_onnx(MODELS / "mlp.onnx", dims={"batch": 4})
    variables = {n.label for n in imp.graph.of_type(TENSOR) if VARIABLE in (n.tags or {})}
    assert variables == set(imp.weights) and len(variables) == 6
    assert "x" not in variables


def test_the_step_learns_and_its_backward_operations_are_scoped() -> None:
    # given the step of a small regression
    doc = _regression()
    step = training_step(doc, optimizer="adam", lr=0.1)
    assert [i for i in step.check() if i.severity == "error"] == []
    ops = step.of_type(OPERATION)
    scopes = {(n.tags or {}).get(GROUP, {}).get("scope", "") for n in ops}
    assert any(s.startswith("backward/") for s in scopes)
    assert {"optimizer/w", "optimizer/b", "optimizer/step"} <= scopes
    forward = {n.id for n in doc.nodes}
    assert all(n.id in forward or (n.tags or {}).get(GROUP) for n in ops)
    # when it runs ten times on a learnable target, feeding its outputs back
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 3)).astype(np.float32)
    t = (x @ np.float32([[1, 2], [3, 4], [5, 6]])).astype(np.float32)
    state = {"w.m": np.zeros((3, 2), np.float32), "w.v": np.zeros((3, 2), np.float32),
             "b.m": np.zeros(2, np.float32), "b.v": np.zeros(2, np.float32),
             "step": np.float32(1)}  # fmt: skip
    losses = []
    for _ in range(10):
        out = run(step, {"x": x, "t": t, **state}, seed=0).by_key()
        losses.append(float(out["loss"]))
        state = {k[: -len(".next")]: v for k, v in out.items() if k.endswith(".next")}
    # then the loss falls and the state keeps its shapes
    assert losses[-1] < losses[0] * 0.8
    assert float(state["step"]) == 11.0
    assert sorted(out) == ["b.m.next", "b.next", "b.v.next", "loss", "step.next", "w.m.next",
                           "w.next", "w.v.next"]  # fmt: skip


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"optimizer": "lion"}, 'optimizer "lion" is unknown; expected one of "sgd"'),
        ({"lr": 0}, 'learning rate "0" is invalid; expected a number in'),
        ({"lr": float("nan")}, 'learning rate "nan" is invalid'),
        ({"loss": "y"}, 'the loss "y" has axes'),
        ({"loss": "nope"}, 'no tensor labelled "nope"; expected exactly one'),
    ],
)
def test_refusals_name_the_value_and_change_nothing(
    kwargs: dict[str, object], message: str
) -> None:
    doc = _regression()
    before = doc.to_json()
    with pytest.raises(AutodiffError, match=message):
        training_step(doc, **kwargs)  # type: ignore[arg-type]
    assert doc.to_json() == before
    # and another step is still derived
    assert training_step(doc).check() == []


def test_a_document_without_variables_or_a_placed_one_is_refused() -> None:
    x = gc.placeholder([D], name="x")
    with pytest.raises(AutodiffError, match="has no variables; mark the trainable tensors"):
        training_step(gc.graph([gc.sum(x * x, name="loss")]))
    data = _regression().to_json()
    op = next(n for n in data["nodes"] if n["type"] == OPERATION)
    data["nodes"].append({
        "id": "app", "type": OPERATION.replace("Operation", "Application"),
        "body": {"operationId": op["id"]},
    })  # fmt: skip
    with pytest.raises(AutodiffError, match="holds Applications"):
        training_step(Graph.from_json(data))


def test_a_state_label_the_document_uses_is_refused() -> None:
    w = gc.variable([D], name="w")
    other = gc.placeholder([D], name="w.m")
    doc = gc.graph([gc.sum(w * other, name="loss")])
    with pytest.raises(AutodiffError, match=r'already has a tensor labelled "w\.m"'):
        training_step(doc, optimizer="momentum")


def test_geon_train_writes_a_step_and_refuses_bad_options(tmp_path: Path) -> None:
    src = tmp_path / "doc.json"
    src.write_text(json.dumps(_regression().to_json()))
    out = tmp_path / "step.json"
    done = geon("train", str(src), "-o", str(out), "--optimizer", "momentum", "--lr", "0.1")
    assert (done.returncode, done.stderr) == (0, "")
    step = Graph.from_json(json.loads(out.read_text()))
    assert {"w.next", "w.m.next", "b.next", "b.m.next", "loss"} <= {n.label for n in step.nodes}
    # a refused loss label: exit 2, one line naming it, nothing written
    bad = tmp_path / "bad.json"
    done = geon("train", str(src), "-o", str(bad), "--lr", "0.1", "--loss", "y")
    assert done.returncode == 2
    assert (
        done.stderr.startswith('geon train: the loss "y" has axes')
        and "Traceback" not in done.stderr
    )
    assert not bad.exists()


def test_a_window_past_64_taps_is_refused_before_any_work() -> None:
    C = gc.Axis("C", 1, roles="Channel")
    Y, X = gc.Axis("Y", 12, roles="Height"), gc.Axis("X", 12, roles="Width")
    P, Q = gc.Axis("P", 4, roles="Height"), gc.Axis("Q", 4, roles="Width")
    x = gc.variable([C, Y, X], name="x")
    pooled = gc.max_pool2d(x, [C, P, Q], 9, stride=1)
    with pytest.raises(AutodiffError, match="has a window of 81 taps that do not tile the input"):
        training_step(gc.graph([gc.sum(pooled, name="loss")]))
    KY, KX = gc.Axis("KY", 9, roles="Height"), gc.Axis("KX", 9, roles="Width")
    K = gc.Axis("K", 1, roles="Channelout")
    f = gc.variable([K, C - 1, KY, KX], name="f")
    conv = gc.conv2d(x, f, [K, P, Q])
    with pytest.raises(AutodiffError, match="has a window of 81 taps; the backward pass takes"):
        training_step(gc.graph([gc.sum(conv, name="loss")]))
