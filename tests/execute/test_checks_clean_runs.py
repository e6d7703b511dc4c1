"""A graph without error issues runs (issue 21): for generated graphs — catalogue operations
built with the authoring API, then edited as the editor and hand-written documents leave them
(ports left unconnected, operations from the palette with nothing connected, axes dropped,
kernels swapped) — and for every gallery graph, zero error issues means ``compile_run``
succeeds, logically and sharded. Kernels outside geon's namespace (``op:``) are outside the
property: custom kernels and loom's ``matmul`` and ``row_sum`` are checked by loom's rules only,
and the executor refuses a custom kernel, or a loom kernel without geon's ports, naming it
(geon/core/checks/runnable.py).
"""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from geon import core as gc
from geon.core.checks import check
from geon.core.checks.runnable import GEON_NAMESPACE
from geon.core.errors import LimitError
from geon.core.graph import IPF_INDEX, IPF_SIGNATURE, OPERATION, TENSOR, TENSOR_AXES, Graph
from geon.core.ops import CATALOGUE
from geon.execute import compile_run
from geon.graphs.gallery import examples

KERNELS = sorted(k for k in CATALOGUE if k.startswith(GEON_NAMESPACE))
MUTATIONS = (
    "drop_input",
    "drop_key",
    "empty_key",
    "drop_output",
    "drop_output_tensor",
    "palette",
    "strip_tags",
    "untag_tensor",
    "untag_all",
    "extra_key",
    "swap_kernel",
)


BUILT = ("relu", "exp", "subtract", "maximum", "add", "sum", "dot", "softmax")


def _apply(kind: str, x: Any, y: Any) -> Any:
    """The authoring API's ``kind`` on ``x`` (and ``y`` for two operands)."""
    if kind in ("relu", "exp"):
        return getattr(gc, kind)(x)
    if kind == "sum":
        return gc.sum(x, list(x.axes)[:1])
    if kind == "softmax":
        return gc.softmax(x, list(x.axes)[-1:])
    return getattr(gc, kind)(x, y)


def _build(draw: st.DrawFn) -> Graph:
    """A small named graph: three placeholders and one to four catalogue operations on them."""
    H, W, N = gc.Axis("H", 2), gc.Axis("W", 3), gc.Axis("N", 2)
    pool: list[Any] = [
        gc.placeholder(axes=[H, W], name="a"),
        gc.placeholder(axes=[W], name="b"),
        gc.placeholder(axes=[W, N], name="c"),
    ]
    made = []
    for _ in range(draw(st.integers(1, 4))):
        x, y = draw(st.sampled_from(pool)), draw(st.sampled_from(pool))
        kind = draw(st.sampled_from(BUILT))
        try:
            t = _apply(kind, x, y)
        except gc.GeonError:  # the API refuses these axes: nothing to edit
            continue
        pool.append(t)
        made.append(t)
    return gc.graph(made or pool[:1])


def _mutate(draw: st.DrawFn, doc: dict[str, Any]) -> None:
    """Edit ``doc`` in place as an editor or a hand-written document might leave it."""
    for name in draw(st.lists(st.sampled_from(MUTATIONS), min_size=1, max_size=3)):
        ops = [n for n in doc["nodes"] if n["type"] == OPERATION]
        tensors = [n for n in doc["nodes"] if n["type"] == TENSOR]
        if name == "palette":
            kernel = draw(st.sampled_from(KERNELS))
            body = {"kernel": kernel, "inputs": {}, "outputs": {}}
            doc["nodes"].append(
                {"id": str(uuid.uuid4()), "type": OPERATION, "label": kernel, "body": body}
            )
            continue
        if name == "untag_all":
            for t in tensors:
                t.get("tags", {}).pop(TENSOR_AXES, None)
            continue
        if name == "untag_tensor" and tensors:
            draw(st.sampled_from(tensors)).get("tags", {}).pop(TENSOR_AXES, None)
            continue
        if not ops:
            continue
        op = draw(st.sampled_from(ops))
        inputs, outputs = op["body"]["inputs"], op["body"]["outputs"]
        keys = sorted(inputs)
        if name == "drop_input" and keys:
            items = inputs[draw(st.sampled_from(keys))]
            if items:
                items.pop(draw(st.integers(0, len(items) - 1)))
        elif name == "drop_key" and keys:
            inputs.pop(draw(st.sampled_from(keys)))
        elif name == "empty_key" and keys:
            inputs[draw(st.sampled_from(keys))] = []
        elif name == "drop_output":
            op["body"]["outputs"] = draw(st.sampled_from([{}, {"result": []}]))
        elif name == "drop_output_tensor" and outputs.get("result"):
            gone = outputs["result"][0]["tensorId"]
            doc["nodes"] = [n for n in doc["nodes"] if n["id"] != gone]
            for other in ops:
                for side in ("inputs", "outputs"):
                    for key, items in other["body"][side].items():
                        other["body"][side][key] = [s for s in items if s["tensorId"] != gone]
        elif name == "strip_tags":
            for tag in (IPF_SIGNATURE, IPF_INDEX):
                op.get("tags", {}).pop(tag, None)
        elif name == "extra_key" and tensors:
            t = draw(st.sampled_from(tensors))
            inputs["bogus"] = [{"tensorId": t["id"], "range": t["body"]["range"]}]
        elif name == "swap_kernel":
            op["body"]["kernel"] = draw(st.sampled_from(KERNELS))


def _runs(g: Graph) -> None:
    """``compile_run`` accepts ``g``, logically and sharded (limits are not the checker's)."""
    for sharded in (False, True):
        try:
            compile_run(g, sharded=sharded, backend="numpy")
        except LimitError:
            return


@st.composite
def edited_graphs(draw: st.DrawFn) -> dict[str, Any]:
    doc = json.loads(json.dumps(_build(draw).to_json()))
    _mutate(draw, doc)
    return doc


@settings(
    max_examples=300,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(edited_graphs())
def test_a_generated_graph_without_error_issues_compiles(doc: dict[str, Any]) -> None:
    # given a generated graph, edited into any state
    g = Graph.from_json(doc)
    # when the checker reports no error
    errors = [i for i in check(g) if i.severity == "error"]
    if errors:
        return
    # then compile_run accepts it (an ExecutionError here is a refusal the checker missed)
    _runs(g)


@pytest.mark.parametrize("example", examples(), ids=lambda e: e.key)
def test_every_gallery_graph_checks_clean_and_compiles(example: Any) -> None:
    # given a gallery graph
    g = Graph.from_json(example.document)
    # then it has no error issue and compile_run accepts it
    assert [i.message for i in check(g) if i.severity == "error"] == []
    _runs(g)


def test_the_issue_21_palette_graph_is_an_error_not_a_refusal() -> None:
    # given the issue's graph: an op:add from the palette, nothing connected
    node = {
        "id": str(uuid.uuid4()),
        "type": OPERATION,
        "label": "op:add",
        "body": {"kernel": "op:add", "inputs": {}, "outputs": {}},
    }
    g = Graph.from_json({"id": str(uuid.uuid4()), "nodes": [node]})
    # then the checker reports errors on it, so the graph does not check clean
    assert {(i.constraint, i.severity) for i in check(g)} == {("OperationPorts", "error")}
