"""The committed PyTorch encoder layer chained into a stack, as one ONNX model: the grouped
document of issue 20's benchmark (benchmarks/bench_canvas_groups.py) and of the editor's
browser test of groups (tests/browser/test_groups.py, which loads this file by its path)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

ENCODER = Path(__file__).resolve().parents[2] / "tests" / "interop" / "models" / "encoder.onnx"


def stacked_encoder(layers: int) -> Any:
    """``encoder.onnx`` chained ``layers`` times: scopes ``/layer/...`` -> ``/layers.i/...``."""
    import onnx
    from onnx import helper

    model = onnx.load(str(ENCODER))
    graph = model.graph
    [x] = graph.input
    [y] = graph.output
    nodes: list[Any] = []
    weights: list[Any] = []
    previous = x.name
    for i in range(layers):

        def rename(value: str, i: int = i, previous: str = previous) -> str:
            if not value:
                return value
            return previous if value == x.name else f"l{i}.{value}"

        for node in graph.node:
            copy = onnx.NodeProto()
            copy.CopyFrom(node)
            scoped = node.name.startswith("/layer/")
            copy.name = f"/layers.{i}/{node.name[7:]}" if scoped else f"{node.name}_{i}"
            copy.input[:] = [rename(v) for v in node.input]
            copy.output[:] = [rename(v) for v in node.output]
            nodes.append(copy)
        for tensor in graph.initializer:
            t = onnx.TensorProto()
            t.CopyFrom(tensor)
            t.name = rename(tensor.name)
            weights.append(t)
        previous = f"l{i}.{y.name}"
    out = onnx.ValueInfoProto()
    out.CopyFrom(y)
    out.name = previous
    stacked = helper.make_model(
        helper.make_graph(nodes, "stack", [x], [out], initializer=weights),
        opset_imports=list(model.opset_import),
    )
    stacked.ir_version = model.ir_version
    return stacked
